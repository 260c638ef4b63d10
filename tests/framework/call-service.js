'use strict';
// Generates a client from a running service with the framework's own generator
// (IMQClient.create), calls the given methods through it, and prints one JSON line:
// [{"method": ..., "value": ...} or {"method": ..., "error": {"code", "message"}}, ...].
//
//     node call-service.js <ServiceClass> <redis port> '[["method", [arg, ...]], ...]'
const { IMQClient } = require('@imqueue/rpc');
const { redisOptions } = require('./redis-options');

async function main(service, port, callsJson) {
    const options = redisOptions(port);
    const namespace = await IMQClient.create(service, { ...options, compile: true, write: false });
    const ClientClass = Object.values(namespace).find(
        value => typeof value === 'function' && value.prototype instanceof IMQClient,
    );
    // The generated class's default queue is its own name minus 'Client' (NotesClient ->
    // 'Notes'), while the service listens on its class name (NotesService): name it.
    const client = new ClientClass(options, service);
    await client.start();
    const results = [];
    try {
        for (const [method, args] of JSON.parse(callsJson)) {
            try {
                const value = await client[method](...args);
                results.push({ method, value: value === undefined ? null : value });
            } catch (error) {
                results.push({ method, error: { code: error.code, message: error.message } });
            }
        }
    } finally {
        await client.destroy();
    }
    process.stdout.write(JSON.stringify({ client: ClientClass.name, results }) + '\n');
}

main(...process.argv.slice(2)).then(
    () => process.exit(0),
    error => {
        console.error((error && error.stack) || error);
        process.exit(1);
    },
);
