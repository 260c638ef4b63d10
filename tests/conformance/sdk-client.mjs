// The TypeScript SDK's client (@modelcontextprotocol/sdk 1.x) driving a stdio MCP server.
//
// Usage: node sdk-client.mjs PLAN.json
//
// PLAN is written by tests/test_conformance.py:
//   { "server":   { "command": ..., "args": [...], "env": {...}, "cwd": ... },
//     "calls":    { toolName: arguments, ... },      arguments for each read-only tool
//     "failing":  { "name": ..., "arguments": {...} }, a call that must come back as isError
//     "resource": uri,                                 a resource to read
//     "prompt":   { "name": ..., "arguments": {...} } }
//
// It lists the tools and calls every one whose readOnlyHint is true or that the plan names
// (with the plan's arguments, {} when the plan has none; the plan names the scaffolds, which
// write only when given a folder), makes the failing call, reads the resource and gets
// the prompt, then prints what it saw as one JSON object on stdout. The test judges it: this
// script asserts nothing, so a wrong answer shows in the test's message, not as a crash here.
// The SDK's callTool checks structuredContent against the tool's outputSchema, so a result
// that breaks its own schema is an error here, reported under that tool.

import { readFile } from "node:fs/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// The client hands the negotiated protocol version to transports that take it; keep it to report.
class RecordingStdioTransport extends StdioClientTransport {
  setProtocolVersion(version) {
    this.protocolVersion = version;
  }
}

function outcome(result) {
  return {
    isError: result.isError === true,
    text: (result.content ?? [])
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n"),
    structuredContent: result.structuredContent ?? null,
  };
}

async function attempt(work) {
  try {
    return await work();
  } catch (error) {
    return { thrown: error instanceof Error ? error.message : String(error) };
  }
}

async function main() {
  const plan = JSON.parse(await readFile(process.argv[2], "utf8"));
  const transport = new RecordingStdioTransport({ ...plan.server, stderr: "inherit" });
  const client = new Client({ name: "imqueue-mcp-conformance", version: "1.0.0" });
  await client.connect(transport);
  try {
    const seen = {
      protocolVersion: transport.protocolVersion ?? null,
      server: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
    };
    const { tools } = await client.listTools();
    seen.tools = tools.map((tool) => ({ name: tool.name, readOnlyHint: tool.annotations?.readOnlyHint ?? null }));
    seen.calls = {};
    for (const tool of tools.filter((tool) => tool.annotations?.readOnlyHint === true || tool.name in plan.calls)) {
      const args = plan.calls[tool.name] ?? {};
      seen.calls[tool.name] = await attempt(async () => outcome(await client.callTool({ name: tool.name, arguments: args })));
    }
    seen.failing = await attempt(async () => outcome(await client.callTool(plan.failing)));
    seen.resources = await attempt(async () => (await client.listResources()).resources.map((resource) => resource.uri));
    seen.resource = await attempt(async () => (await client.readResource({ uri: plan.resource })).contents);
    seen.prompts = await attempt(async () => (await client.listPrompts()).prompts.map((prompt) => prompt.name));
    seen.prompt = await attempt(async () => await client.getPrompt(plan.prompt));
    process.stdout.write(JSON.stringify(seen) + "\n");
  } finally {
    await client.close();
  }
}

main().catch((error) => {
  process.stderr.write(`sdk-client.mjs: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
