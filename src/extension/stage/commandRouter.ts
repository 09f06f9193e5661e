import * as vscode from 'vscode';
import type { CommandRegistrar, CommandSpec } from '../commands';

/**
 * The commands package.json contributes, registered at activation as stubs: running one waits for
 * `ready` (the workbench loading) and then runs the handler the workbench gave {@link register}.
 * Commands that are not contributed are registered with VS Code directly when the workbench
 * registers them.
 */
export class CommandRouter implements vscode.Disposable {
  private readonly handlers = new Map<string, CommandSpec>();
  private readonly stubs: vscode.Disposable[];

  /**
   * @param contributed ids from package.json `contributes.commands`
   * @param ready loads the workbench (which registers the handlers); its error is the command's error
   */
  constructor(private readonly contributed: readonly string[], ready: () => Promise<unknown>) {
    this.stubs = contributed.map((id) => vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      await ready();
      const spec = this.handlers.get(id);
      if (!spec) throw new Error(`EXP-Bench: command ${id} is contributed in package.json but the workbench registered no handler for it`);
      return spec.execute(...args);
    }));
  }

  /** The {@link CommandRegistrar} handed to the workbench. */
  readonly register: CommandRegistrar = (specs) => specs.map((spec) => {
    if (!this.contributed.includes(spec.id)) return vscode.commands.registerCommand(spec.id, (...args: unknown[]) => spec.execute(...args));
    if (this.handlers.has(spec.id)) throw new Error(`EXP-Bench: command ${spec.id} registered twice`);
    this.handlers.set(spec.id, spec);
    return new vscode.Disposable(() => { if (this.handlers.get(spec.id) === spec) this.handlers.delete(spec.id); });
  });

  /** Contributed commands that have no handler (empty once the workbench has loaded). */
  unhandled(): string[] {
    return this.contributed.filter((id) => !this.handlers.has(id));
  }

  dispose(): void {
    for (const d of this.stubs) d.dispose();
    this.handlers.clear();
  }
}

/** Command ids of package.json `contributes.commands` (as VS Code read it: `extension.packageJSON`). */
export function contributedCommands(packageJSON: unknown): string[] {
  const list = (packageJSON as { contributes?: { commands?: unknown } } | undefined)?.contributes?.commands;
  return Array.isArray(list) ? list.map((c) => (c as { command?: unknown })?.command).filter((c): c is string => typeof c === 'string') : [];
}
