// Identifiers that package.json contributes and both stages of the extension use. This module is
// part of the activation bundle (dist/extension.js): it must stay free of imports.

/** `viewType` of the brief webview panels (package.json `activationEvents` `onWebviewPanel:`). */
export const BRIEF_VIEW_TYPE = 'expbench.brief';

/** Id of the Tasks tree view (package.json `contributes.views`). */
export const TASKS_VIEW_ID = 'expbench.tasks';

/** The session marker inside a workspace (contract: docs/DEVELOPING.md; src/core/session/marker.ts). */
export const SESSION_MARKER_SEGMENTS = ['.devcontainer', 'expbench-session.json'] as const;

/**
 * Context key set once the Tasks tree's top level has been listed: the view's "no tasks" welcome
 * (package.json `viewsWelcome` `when`) is shown only then, never while the tasks are loading.
 */
export const TASKS_LISTED_CONTEXT = 'expbench.tasksListed';

/**
 * `viewType` of the trajectory viewer, a read-only custom editor (package.json `customEditors`):
 * the default editor of `*.eval` (Inspect) and `*.traj` (SWE-agent), names that are only ever
 * trajectories; every "Open as Trajectory" opens a file with it.
 */
export const TRAJECTORY_VIEW_TYPE = 'expbench.trajectory';

/**
 * The same viewer offered as an option ("Open With…") for names that other files also have
 * (`*.traj.json`, `output.jsonl`, `events.jsonl`): a contribution has one priority, so these get a
 * viewType of their own. A `.json` log is opened with "Open as Trajectory".
 */
export const TRAJECTORY_OPTION_VIEW_TYPE = 'expbench.trajectory.option';

/** Both viewTypes of the trajectory viewer. */
export const TRAJECTORY_VIEW_TYPES: readonly string[] = [TRAJECTORY_VIEW_TYPE, TRAJECTORY_OPTION_VIEW_TYPE];

/** Id of the Trajectories tree view (package.json `contributes.views`, container `expbench`): runs by task, agent and model. */
export const TRAJECTORIES_VIEW_ID = 'expbenchTrajectories';

/** Id of the Run Sets tree view (package.json `contributes.views`, container `expbench`): run sets and their units (docs/runs.md). */
export const RUN_SETS_VIEW_ID = 'expbench.runSets';
