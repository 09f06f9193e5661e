// The layer order of src/core: its rooms (top-level folders, or top-level files such as
// errors.ts) on floors, lowest first. A room imports only rooms on lower floors; rooms on one
// floor do not import each other unless the pair is listed in SAME_FLOOR_PAIRS. The same list is
// written in docs/architecture.md (test/unit/layers.unit.test.ts checks that the two agree).
export const FLOORS = [
  ['errors', 'log'],
  ['untrusted'],
  ['util', 'paths', 'layout'],
  ['git'],
  ['tasks', 'sandbox', 'steps', 'review'],
  ['workspace', 'channel', 'placement'],
  ['session', 'proctor'],
  ['verify', 'llm'],
  ['judge'],
  ['metrics'],
  ['interop'],
  ['trajectory'],
  ['agent', 'curation', 'viewer'],
  ['flows', 'figures'],
  ['mcp', 'runs'],
  ['campaigns'],
];

/** Same-floor imports that are allowed, as `importer -> imported`. None today. */
export const SAME_FLOOR_PAIRS = [];

/** Floor index of each room. */
export const FLOOR_OF = new Map(FLOORS.flatMap((rooms, i) => rooms.map((r) => [r, i])));
