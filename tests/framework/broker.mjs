// @imqueue 3.x options for the broker the test started, shared by the glue scripts. The address
// comes the way the docs' tutorial passes it to a service: IMQ_REDIS, "host:port".

// The runtime reports routine connection chatter through its logger: keep warnings and errors,
// which go to stderr, so stdout carries only each script's answer.
const quietLogger = { ...console, log() {}, info() {} };

export function brokerOptions(address = process.env.IMQ_REDIS) {
    const match = /^([^:\s]+):(\d{1,5})$/.exec(address ?? '');
    if (!match) {
        throw new TypeError(`IMQ_REDIS ${JSON.stringify(address)} is not "host:port"`);
    }
    return { host: match[1], port: Number(match[2]), logger: quietLogger };
}
