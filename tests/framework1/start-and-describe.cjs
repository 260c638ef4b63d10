'use strict';
// Starts a compiled @imqueue 1.x service class on the test's Redis, then prints, as one JSON
// line, what it says about itself over the queue (describe()), and exits.
//
//     node start-and-describe.cjs <compiled module .js> <ServiceClass> <redis port>
const path = require('path');
const { IMQClient } = require('@imqueue/rpc');

const [modulePath, className, port] = process.argv.slice(2);
const options = { host: '127.0.0.1', port: Number(port), logger: { ...console, log() {}, info() {} } };

class DescriptionReader extends IMQClient {}

async function main() {
    // Requiring the module runs its decorators: a decorator style 1.x cannot take fails here.
    const ServiceClass = require(path.resolve(modulePath))[className];
    const service = new ServiceClass(options);
    await service.start();
    const reader = new DescriptionReader(options, className, `${className}DescriptionReader`);
    await reader.start();
    process.stdout.write(JSON.stringify(await reader.describe()) + '\n');
}

main().then(
    () => process.exit(0),
    error => {
        console.error((error && error.stack) || error);
        process.exit(1);
    },
);
