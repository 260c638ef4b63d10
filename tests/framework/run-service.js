'use strict';
// Starts a compiled @imqueue service class against the test's Redis and prints "ready".
//
//     node run-service.js <compiled module .js> <ServiceClass> <redis port>
//
// The scaffold's own bootstrap (src/index.ts) targets @imqueue 3.x: an ES module with a
// top-level await and the default Redis on localhost:6379. The 1.x runtime here is CommonJS
// and the test's Redis listens on a free port, so this script stands in for that bootstrap.
// IMQService itself stops the process on SIGTERM or SIGINT.
const path = require('path');

const [modulePath, className, port] = process.argv.slice(2);
const ServiceClass = require(path.resolve(modulePath))[className];

if (typeof ServiceClass !== 'function') {
    console.error(`${modulePath} exports no class named ${className}`);
    process.exit(2);
}

const service = new ServiceClass({ host: '127.0.0.1', port: Number(port), logger: console });

service.start().then(
    () => console.log('ready'),
    error => {
        console.error(error);
        process.exit(1);
    },
);
