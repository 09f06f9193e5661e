import * as vscode from 'vscode';

/** A command as a small object; {@link registerCommands} registers a list of them. */
export interface CommandSpec {
  id: string;
  execute(...args: any[]): unknown;
}

/** Registers every command and returns their disposables. */
export function registerCommands(specs: CommandSpec[]): vscode.Disposable[] {
  return specs.map((c) => vscode.commands.registerCommand(c.id, (...args: unknown[]) => c.execute(...args)));
}
