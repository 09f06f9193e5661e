import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { OutsideClient, OutsideTools } from '../agent/outside';
import { briefMessage, type AgentBrief } from '../agent/prompt';
import { log } from '../log';

const logger = log('mcp');

/** URI of the brief resource (text/markdown: question, method, agent instructions). */
export const BRIEF_URI = 'expbench://session/brief';

/** What {@link createMcpServer} needs. */
export interface McpServerOptions {
  tools: OutsideTools;
  brief: AgentBrief;
  /** `stdio` or `http`: recorded in `agent.attached`. */
  transport: string;
  /** The server's version in its initialize answer (the package's). */
  version: string;
}

/**
 * One MCP server (Model Context Protocol, @modelcontextprotocol/sdk `McpServer`) for one client
 * connection: the task's tools (`tools/list`, `tools/call`: the built-in agent's, with their JSON
 * Schemas, run and recorded by {@link OutsideTools}) and the brief as the resource
 * {@link BRIEF_URI}. The client's name is its initialize request's `clientInfo`; `agent.attached`
 * is recorded once it has initialized. A refused or failed call is a result with `isError: true`
 * (MCP's rule for tool errors the model should see), never a protocol error.
 */
export function createMcpServer(o: McpServerOptions): McpServer {
  const mcp = new McpServer({ name: 'expbench', title: 'EXP-Bench task session', version: o.version }, {
    capabilities: { tools: {}, resources: {} },
    instructions: [
      `You work EXP-Bench task ${o.brief.taskId} in its container (/workspace, no network) through these tools only;`,
      `read the brief (resource ${BRIEF_URI} or the read_brief tool), set the design, write reproduce_exp_bench.sh, run it (run_script),`,
      'set the conclusion with the numbers your run printed, then submit. Every call is recorded in the session.',
    ].join(' '),
  });
  mcp.registerResource('brief', BRIEF_URI, {
    title: `Brief of ${o.brief.taskId}`, description: 'The task: question, method and instructions (no ground truth).', mimeType: 'text/markdown',
  }, async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: briefMessage(o.brief) }] }));
  const client = (): OutsideClient => {
    const c = mcp.server.getClientVersion();
    return { name: c?.name || 'unknown-mcp-client', ...(c?.version ? { version: c.version } : {}), via: 'mcp', transport: o.transport };
  };
  mcp.server.oninitialized = () => { void o.tools.attach(client()); };
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: o.tools.specs().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as { type: 'object' } })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const c = client();
    const r = await o.tools.call(c, req.params.name, req.params.arguments ?? {}, extra.signal);
    logger.info(`${c.name}: ${req.params.name}${r.error ? ` ✗ ${r.error.slice(0, 160)}` : ''} (${Math.round(r.durationMs)} ms)`);
    return { content: [{ type: 'text' as const, text: r.result }], ...(r.error ? { isError: true } : {}) };
  });
  return mcp;
}
