'use strict';
// Prints, as one JSON line, what a running service says about itself over the queue: the
// describe() answer IMQClient.create reads to generate a client.
//
//     node describe-service.js <ServiceClass> <redis port>
const { IMQClient } = require('@imqueue/rpc');
const { redisOptions } = require('./redis-options');

class DescriptionReader extends IMQClient {}

async function main(service, port) {
    const reader = new DescriptionReader(redisOptions(port), service, `${service}DescriptionReader`);
    await reader.start();
    try {
        process.stdout.write(JSON.stringify(await reader.describe()) + '\n');
    } finally {
        await reader.destroy();
    }
}

main(...process.argv.slice(2)).then(
    () => process.exit(0),
    error => {
        console.error((error && error.stack) || error);
        process.exit(1);
    },
);
