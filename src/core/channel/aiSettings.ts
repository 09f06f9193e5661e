/**
 * The VS Code settings that turn AI assistance off in a proctored window (issue 13, item 3):
 * chat and agent mode, language-model tools from extensions and MCP servers, inline completions
 * (which is how Copilot and other completion providers show), the chat setup dialog, and the
 * natural-language search of the command palette and the settings editor. Each value is the "off" value. Used three ways: the solver extension
 * contributes them as `configurationDefaults` (src/solver/package.json, copied into dist/solver
 * by scripts/build.mjs; test/unit/solver.bundle.unit.test.ts checks the two are equal), the proctored window's code-server writes them into its User
 * settings.json, and the solver reads them back when it connects and whenever one changes, and reports them as
 * event `ai.settings`. With AI allowed the defaults stay off and the baseliner may turn them on
 * (recorded the same way).
 * Setting ids are VS Code's (1.100+) and GitHub Copilot's; a setting the window does not know
 * reads as undefined, which counts as off (the feature is not there).
 */
export const AI_OFF_SETTINGS: Readonly<Record<string, unknown>> = Object.freeze({
  'chat.disableAIFeatures': true,
  'chat.agent.enabled': false,
  'chat.commandCenter.enabled': false,
  'chat.extensionTools.enabled': false,
  'chat.mcp.enabled': false,
  'editor.inlineSuggest.enabled': false,
  'github.copilot.enable': { '*': false },
  'github.copilot.editor.enableAutoCompletions': false,
  'github.copilot.nextEditSuggestions.enabled': false,
  'workbench.commandPalette.experimental.enableNaturalLanguageSearch': false,
  'workbench.settings.enableNaturalLanguageSearch': false,
  'chat.mcp.discovery.enabled': false,
  'chat.setupFromDialog': false,
});

/**
 * Whether the values read in a window (`read`: setting id → value, undefined when unknown) are all
 * off, and which are not. `chatModels` is the number of language models the window offers
 * (`vscode.lm.selectChatModels()`): any model counts as AI on.
 */
export function aiOff(read: Record<string, unknown>, chatModels = 0): { off: boolean; on: string[] } {
  const on = Object.entries(AI_OFF_SETTINGS)
    .filter(([k, offValue]) => read[k] !== undefined && JSON.stringify(read[k]) !== JSON.stringify(offValue))
    .map(([k]) => k);
  if (chatModels > 0) on.push(`language models available: ${chatModels}`);
  return { off: on.length === 0, on };
}
