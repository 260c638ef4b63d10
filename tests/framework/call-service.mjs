// Generates a client from a running service with the framework's own generator
// (IMQClient.create), calls the given methods through it, and prints one JSON line:
// {"client": ..., "results": [{"method", "value"} or {"method", "error": {"code", "message"}}]}.
//
//     IMQ_REDIS=host:port node call-service.mjs <ServiceClass> '[["method", [arg, ...]], ...]'
import { IMQClient } from '@imqueue/rpc';
import { brokerOptions } from './broker.mjs';

const [service, callsJson] = process.argv.slice(2);
const options = brokerOptions();
const namespace = await IMQClient.create(service, { ...options, compile: true, write: false });
const ClientClass = Object.values(namespace).find(
    value => typeof value === 'function' && value.prototype instanceof IMQClient,
);
// The generated class's default queue is its own name minus 'Client' (NotesClient -> 'Notes'),
// while the service listens on its class name (NotesService): name it.
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
process.exit(0);
