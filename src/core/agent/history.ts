import type { ToolChatMessage } from '../llm/chat';
import type { SessionEvent } from '../session/events';
import { MAX_EXCERPT_CHARS } from '../steps/events';
import { briefMessage, NUDGE, systemPrompt, type AgentBrief } from './prompt';

/**
 * The built-in agent's conversation rebuilt from a session's event log, to go on where a run was
 * interrupted (a killed process, a reaped or cancelled unit, a harness error) instead of starting
 * afresh. What is rebuilt: the system prompt and the brief (as the loop sends them), then for each
 * recorded `agent.model_call` that got an answer, the assistant's message (its text) with the tool
 * calls recorded after it (`agent.tool_call`: id, name, arguments) and each call's result as the
 * model was told it, and the loop's nudge after a reply without a tool call.
 *
 * What cannot be rebuilt exactly, and how it is told: texts, arguments and results are recorded as
 * excerpts of at most 4000 characters (MAX_EXCERPT_CHARS; a cut one says `[… characters omitted]`);
 * arguments cut so that they are no JSON any more are sent as `{}` with the cut noted in the result;
 * tool calls that the model asked for but that were never recorded (the run was interrupted under
 * them) are left out of the assistant's message and named to the model; a researcher's pause notes
 * are not replayed. The last message tells the model that the run was interrupted and resumed.
 */
export interface ResumedConversation {
  messages: ToolChatMessage[];
  /** Model calls that got an answer (the run's steps so far: the step limit counts them). */
  steps: number;
  toolCalls: number;
  /** Input + output tokens and USD of every recorded model call (retries included: they were paid). */
  tokens: number;
  spentUsd: number;
  /** Tool calls asked for and never recorded, or recorded with the error the stop gave them, by name (the run was interrupted under them). */
  interrupted: string[];
  /** Recorded texts that are excerpts (cut at the record's limit). */
  cut: number;
}

interface Turn { text: string; asked: string[]; calls: Array<{ id: string; name: string; args: string; result: string; error?: string }>; stoppedUnder?: string }

const OMITTED = /\n… \[\d+ characters omitted\] …\n/;

/**
 * Rebuilds the conversation of the built-in agent from `events` (the session's log, in order).
 * Only the built-in agent's own calls count: an outside agent's tool calls (`client` set) are not
 * its conversation. Undefined when the log holds no model call of it (nothing to resume: a fresh
 * start loses nothing).
 */
export function conversationFromEvents(events: readonly SessionEvent[], brief: AgentBrief): ResumedConversation | undefined {
  const turns: Turn[] = [];
  let steps = 0; let tokens = 0; let spent = 0; let cut = 0; let toolCalls = 0;
  let current: Turn | undefined;
  for (const e of events) {
    if (e.type === 'agent.model_call') {
      tokens += e.inputTokens + e.outputTokens;
      spent += e.costUsd ?? 0;
      if (e.error) continue;
      steps++;
      current = { text: e.text ?? '', asked: e.toolCalls ?? [], calls: [] };
      if (OMITTED.test(current.text)) cut++;
      turns.push(current);
    } else if (e.type === 'agent.tool_call' && e.client === undefined && current) {
      toolCalls++;
      if (OMITTED.test(e.arguments) || OMITTED.test(e.result)) cut++;
      current.calls.push({ id: e.callId ?? `call_resumed_${toolCalls}`, name: e.tool, args: e.arguments, result: e.result, ...(e.error ? { error: e.error } : {}) });
    } else if (e.type === 'note.added' && e.text.startsWith('agent stopped: ')) {
      // A stop under a tool (a signal) ends that tool with an error: the call was interrupted, not failed.
      const last = current?.calls[current.calls.length - 1];
      if (current && last?.error && /^agent stopped: (cancelled|error)\b/.test(e.text)) current.stoppedUnder = last.name;
      current = undefined;
    }
  }
  if (!steps) return undefined;
  const messages: ToolChatMessage[] = [{ role: 'system', content: systemPrompt() }, { role: 'user', content: briefMessage(brief) }];
  const interrupted: string[] = [];
  turns.forEach((t, i) => {
    const last = i === turns.length - 1;
    if (!t.asked.length) {
      messages.push({ role: 'assistant', content: t.text });
      if (!last) messages.push({ role: 'user', content: NUDGE });
      return;
    }
    const missing = t.asked.slice(t.calls.length);
    if (t.stoppedUnder) interrupted.push(t.stoppedUnder);
    interrupted.push(...missing);
    if (!t.calls.length) {
      if (t.text) messages.push({ role: 'assistant', content: t.text });
      return;
    }
    messages.push({
      role: 'assistant', content: t.text || null,
      tool_calls: t.calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: isJson(c.args) ? c.args : '{}' } })),
    });
    for (const c of t.calls) {
      const note = isJson(c.args) ? '' : `[the arguments of this call were cut in the record (${c.args.length} characters kept of more); they are not repeated]\n`;
      messages.push({ role: 'tool', tool_call_id: c.id, content: note + c.result });
    }
  });
  messages.push({ role: 'user', content: resumeNote(interrupted, cut) });
  return { messages, steps, toolCalls, tokens, spentUsd: spent, interrupted, cut };
}

function resumeNote(interrupted: string[], cut: number): string {
  return [
    'Your run was interrupted (the process running you stopped) and goes on now from the conversation as it was recorded.',
    interrupted.length ? `Your tool call(s) ${interrupted.join(', ')} did not finish: the stop interrupted them (an error result above is the stop's), and what they did may be partly done; look before you rely on it, and do them again where needed.` : '',
    cut ? `Long texts above are as recorded: cut to ${MAX_EXCERPT_CHARS} characters.` : '',
    'The workspace /workspace is as you left it; the container was started again, so files elsewhere (/tmp, installed packages) and running processes may be gone.',
  ].filter(Boolean).join('\n');
}

function isJson(s: string): boolean {
  try { JSON.parse(s); return true; } catch { return false; }
}
