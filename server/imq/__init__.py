"""imq: the bridge to the real imq CLI (@imqueue/cli 5.2.2), with no MCP in it.

bridge.py            the eight operations (timeouts, dry run by default) -> BridgeResult
arguments.py         refuses what is unsafe before imq runs; passes flags as imq parses them
runner.py            finds and runs imq without a shell (stdin closed, process-group kill,
                     ANSI stripped, output capped) and words the outcome from imq's own error
generated_client.py  the client file generate_client wrote, read back
"""
