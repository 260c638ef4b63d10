// Prints, as one JSON line, what a running service says about itself over the queue: the
// describe() answer IMQClient.create reads to generate a client.
//
//     IMQ_REDIS=host:port node describe-service.mjs <ServiceClass>
import { IMQClient } from '@imqueue/rpc';
import { brokerOptions } from './broker.mjs';

class DescriptionReader extends IMQClient {}

const [service] = process.argv.slice(2);
const reader = new DescriptionReader(brokerOptions(), service, `${service}DescriptionReader`);
await reader.start();
try {
    process.stdout.write(JSON.stringify(await reader.describe()) + '\n');
} finally {
    await reader.destroy();
}
process.exit(0);
