import { promises as fsp } from 'node:fs';
import { Command } from 'commander';
import { readPriceTable } from '../../core/llm/ledger';
import { newToken, parseLoopbackAddress, serveMcpHttp, writeTokenFile } from '../../core/mcp/http';
import { createMcpServer } from '../../core/mcp/server';
import { BoundedStdioTransport } from '../../core/mcp/stdio';
import { openMcpSession, tokenFile } from '../../core/mcp/session';
import { toolVersion } from '../../core/paths';
import { errorMessage } from '../../core/util/errors';
import { onStopSignals } from '../signals';
import { endpointFromEnv as judgeEndpointFromEnv } from './judge';

interface McpCliOptions { http?: string; verify: boolean; judge: boolean; network?: boolean; takeOver?: boolean; prices?: string }

/**
 * `expbench agent mcp SESSION [--http ADDR]`: serves a prepared session's tools to an outside
 * agent over MCP (docs/outside-agents.md): stdio by default (the client starts this command;
 * stdout is the protocol, messages go to stderr), or Streamable HTTP at `http://ADDR/mcp` on
 * loopback with a per-session bearer token (printed once on stderr, and in `private/mcp-token`,
 * mode 0600, removed at the end). Ends when the client closes stdin (stdio) or on SIGINT/SIGTERM;
 * the clock is paused then and the work container removed when this command started it.
 */
export function registerMcp(agent: Command): void {
  agent.command('mcp').argument('<session>', 'a prepared session folder (expbench prepare)')
    .option('--http <addr>', 'Streamable HTTP on a loopback address: PORT, 127.0.0.1:PORT or [::1]:PORT (default: stdio)')
    .option('--no-verify', 'do not run the verifier after submit')
    .option('--no-judge', 'do not run the judge after submit')
    .option('--prices <file>', 'price table JSON for the judge\'s ledger')
    .option('--network', 'give the work container network access (default: none)')
    .option('--take-over', 'open the session even while another live process (a window) owns it; that process then stops writing it')
    .description('serve the session\'s task tools and brief to an outside agent (Claude Code, Codex CLI, a VS Code chat agent) over MCP')
    .action(async (dir: string, opts: McpCliOptions) => {
      const address = opts.http === undefined ? undefined : parseLoopbackAddress(opts.http);
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => { stop = resolve; });
      // Ctrl-C, SIGTERM and SIGHUP (the terminal of an HTTP server closed) end it cleanly. Kept until
      // the end: a client that sends SIGTERM while the session closes (the SDK's stdio client does,
      // 2 s after closing stdin) must not cut the clean-up short.
      // Installed before the session opens, so a signal during the opening is not node's default.
      const signals = onStopSignals(() => stop());
      const s = await openMcpSession({
        sessionDir: dir, verify: opts.verify, judge: opts.judge, network: opts.network, takeOver: opts.takeOver,
        judgeEndpoint: opts.judge ? judgeEndpointFromEnv() : undefined, prices: opts.prices ? await readPriceTable(opts.prices) : undefined,
      }).catch((e: unknown) => { signals.dispose(); throw e; });
      const version = toolVersion();
      s.handle.onDidLose((by) => {
        process.stderr.write(`expbench: ${by.client} (pid ${by.pid}) took the session over; the MCP server stops\n`);
        stop();
      });
      const file = tokenFile(s.layout);
      let closeTransport: () => Promise<void> = async () => undefined;
      try {
        if (!address) {
          const transport = new BoundedStdioTransport();
          const mcp = createMcpServer({ tools: s.tools, brief: s.brief, transport: 'stdio', version });
          transport.onclose = () => stop();
          process.stdin.once('end', () => stop());
          await mcp.connect(transport);
          closeTransport = () => mcp.close();
          process.stderr.write(`expbench: MCP server (stdio) for ${s.brief.taskId}, session ${s.layout.root}\n`);
        } else {
          const token = newToken();
          await writeTokenFile(file, token);
          const http = await serveMcpHttp({ address, token, newServer: () => createMcpServer({ tools: s.tools, brief: s.brief, transport: 'http', version }) });
          closeTransport = () => http.close();
          process.stderr.write(`expbench: MCP server (Streamable HTTP) for ${s.brief.taskId} at ${http.url}\n`
            + `expbench: token (send "Authorization: Bearer TOKEN"; also in ${file}, mode 0600): ${token}\n`);
        }
        await stopped;
      } finally {
        await closeTransport().catch((e: unknown) => process.stderr.write(`expbench: closing the MCP server: ${errorMessage(e)}\n`));
        if (address) await fsp.rm(file, { force: true });
        await s.close();
        signals.dispose();
      }
    });
}
