"""imq: the bridge to the real imq CLI (@imqueue/cli 5.2.2), with no MCP in it.

bridge.py            the eight operations (timeouts, dry run by default) -> BridgeResult
arguments.py         refuses what is unsafe before imq runs; passes flags as imq parses them
runner.py            finds and runs imq without a shell (stdin closed, process-group kill,
                     ANSI stripped, output capped) and words the outcome from imq's own error
generated_client.py  the client file generate_client wrote, read back
broker.py            the broker address (redis, IMQ_REDIS, localhost:6379), whether Redis answers
                     there, and imq's generator run through the project's own @imqueue/rpc
fleet_start.py       what fleet start runs in each service (npm run dev), and the production start
production.py        fleet's mode='production': npm run build, then npm start detached, recorded
                     in imq ctl's own .pids and log folder (status, stop and logs see it), its mode
                     kept beside them
template_pins.py     the template's unpinned dependencies, and the pins create_service(pin) writes
"""
