'use strict';
// @imqueue 1.x options for the test's Redis on 127.0.0.1:<port>, shared by the glue scripts.

// The runtime reports routine connection chatter through its logger: keep warnings and errors,
// which go to stderr, so stdout carries only each script's answer.
const quietLogger = { ...console, log() {}, info() {} };

function redisOptions(port) {
    const number = Number(port);
    if (!Number.isInteger(number) || number <= 0) {
        throw new TypeError(`Redis port ${JSON.stringify(port)} is not a port number`);
    }
    return { host: '127.0.0.1', port: number, logger: quietLogger };
}

module.exports = { redisOptions };
