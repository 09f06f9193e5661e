import * as vscode from 'vscode';

/** A command as a small object; a {@link CommandRegistrar} registers a list of them. */
export interface CommandSpec {
  id: string;
  execute(...args: any[]): unknown;
}

/**
 * Registers commands and returns their disposables. The extension's activation stage
 * (src/extension/extension.ts) passes one that routes the commands contributed in package.json
 * through the stubs it registered, and registers the others with VS Code.
 */
export type CommandRegistrar = (specs: CommandSpec[]) => vscode.Disposable[];

/** Registers every command with VS Code (`vscode.commands.registerCommand`) and returns their disposables. */
export const registerCommands: CommandRegistrar = (specs) =>
  specs.map((c) => vscode.commands.registerCommand(c.id, (...args: unknown[]) => c.execute(...args)));
