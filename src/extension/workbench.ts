import * as vscode from 'vscode';
import { judgeSession } from '../core/flows/judge';
import { SessionService } from '../core/flows/sessionService';
import { log } from '../core/log';
import { verifyStep } from '../core/flows/verify';
import { makePatch } from '../core/workspace/patch';
import { BriefPanels, BriefSerializer } from './brief/briefPanel';
import type { CommandRegistrar } from './commands';
import { ContainerTerminals } from './containerTerminal';
import { FeasibilitySection } from './curation/feasibilitySection';
import { GroundTruthView } from './curation/groundTruthView';
import { AgreementView } from './review/agreementView';
import { TaskLintDiagnostics } from './curation/lintDiagnostics';
import { validateTaskCommand } from './curation/validateCommand';
import { CuratorDesk } from './curation/desk';
import { activateGaps, type GapsController } from './gaps';
import { judgeConfig, secretCommands } from './judgeConfig';
import { createLogChannel } from './logger';
import { openTaskCommand, sessionsDir } from './openTask';
import { SessionIndex } from './sessionIndex';
import { IdleContainerStopper, offerToStopBeforeSwitch } from './session/workContainer';
import type { OpenTaskDeps } from './switchSession';
import { openWindowSession, sessionCommands, type ActiveSession } from './session/activateSession';
import { resultRows } from './session/results';
import { setting } from './settings';
import type { SubmitHooks } from './session/submitFlow';
import { taskCommands } from './taskCommands';
import { notProctoredStatus, proctoredBaselineCommand } from './proctorCommand';
import { TaskStore } from './taskStore';
import { TaskTreeProvider } from './taskTree';
import { registerVerifier, verifyLimitsFromSettings } from './verifier';
import { errorMessage } from '../core/util/errors';
import { trajectoryCommands } from './trajectory/importCommands';
import { activateTrajectoryViewer, type TrajectoryViewer } from './trajectory/viewer';
import { activateTriage, type TriageFeature } from './trajectory/triage';
import { activateResults, type ResultsFeature } from './results/results';
import { activateRepoAtStep } from './trajectory/repoAtStep';
import { agentCommands } from './agent/agentCommands';
import { exportInspectCommand } from './session/exportInspect';
import { LmToolsFeature } from './agent/lmTools';
import { activateRunSets, type RunSetsFeature } from './runs';

const logger = log('workbench');

/**
 * The composition root, loaded by the activation stage (src/extension/extension.ts) on first use
 * (bundle dist/workbench.js): builds each feature with plain constructors and puts every
 * disposable on `context.subscriptions`. Does no I/O beyond registering: datasets load lazily when
 * the tree or a command first needs them, and a window's task session opens after this returns.
 * Commands go through `register` (contributed ones are routed through the activation stage's stubs).
 */
export function activateWorkbench(context: vscode.ExtensionContext, register: CommandRegistrar): WorkbenchApi {
  const started = performance.now();
  const channel = createLogChannel();
  const store = new TaskStore();
  const sessions = new SessionService();
  context.subscriptions.push({ dispose: () => void sessions.dispose() });
  const sessionIndex = new SessionIndex(sessionsDir);
  const tree = new TaskTreeProvider(store, sessionIndex);
  const briefs = new BriefPanels(context.extensionUri);
  const hooks: SubmitHooks = {
    // The settings' limits apply under the session's recorded environment (its curation file's limits).
    verify: () => (setting('verify.onSubmit') ? verifyStep({
      fallbackLimits: verifyLimitsFromSettings(),
    }) : undefined),
    judge: async (c) => {
      if (!setting('judge.onSubmit')) return undefined;
      const config = await judgeConfig(context.secrets);
      return async (layout, signal) => {
        const r = await judgeSession(layout.root, { task: c.task, ...config, signal, makePatch: async (ws) => (await makePatch(ws)).patch });
        return { ok: r.record.harnessErrors.length === 0, summary: `judge (${r.record.kind}) done`, record: 'private/judge/latest.json' };
      };
    },
    loadResults: resultRows,
    // the submitted session's gaps (not whichever session the window shows); registered below (gaps)
    afterSubmit: async (t) => { await vscode.commands.executeCommand('expbench.refreshGaps', t.layout.root); },
  };
  const session: Promise<ActiveSession | undefined> = openWindowSession(context, sessions, store, hooks, briefs)
    .catch((e) => { logger.error(e as Error); return undefined; });
  const { gaps, commands: gapsCommands } = activateGaps(context, {
    judgeConfig: () => judgeConfig(context.secrets),
    windowSession: async () => {
      const c = (await session)?.controller;
      return c && { root: c.layout.root, task: c.task, events: c.session.events, refreshResults: async () => c.setResults(await resultRows(c.layout)) };
    },
    findTask: (id) => store.find(id),
    briefs,
  });
  registerVerifier(context, {
    register,
    sessionRoot: async () => (await session)?.controller.layout.root,
    events: async () => (await session)?.controller.session.events,
    onRecord: () => void session.then(async (s) => s?.controller.setResults(await resultRows(s.controller.layout)))
      .catch((e) => logger.warn(`could not refresh the results: ${errorMessage(e)}`)),
  });
  const terminals = new ContainerTerminals(context.extensionUri, () => session, context.workspaceState);
  // Leaving this window's session for another task: offer to stop its container; stop idle ones.
  const switching: OpenTaskDeps = {
    beforeSwitch: async (next) => { const c = (await session)?.controller; return c ? offerToStopBeforeSwitch(c.container, c.task.id, next) : true; },
    onPrepared: () => void sessionIndex.refresh(),
  };
  let windowSession: ActiveSession | undefined;
  void session.then((s) => { windowSession = s; if (s) void sessionIndex.refresh(); });
  // an attached agent counts as activity (`agents` is set below, before the first check)
  const idleStopper = new IdleContainerStopper(() => windowSession?.controller.container, undefined, undefined, (s) => agents.atWork(s));
  void session.then((s) => terminals.onSessionStarted(s)).catch((e) => logger.error(e as Error));
  const taskLint = new TaskLintDiagnostics(() => store.dirs());
  const feasibility = new FeasibilitySection(briefs);
  // The curator's view; refused in a solver's window (one holding a task session).
  const groundTruth = new GroundTruthView(store, async () => (await session) !== undefined);
  const agreement = new AgreementView(context.extensionUri);
  // The curator's desk (issue 31): the queue, task pages, verdicts, edits, re-judge, export.
  const desk = new CuratorDesk(context.extensionUri, context.globalStorageUri.fsPath, store, sessionIndex, () => judgeConfig(context.secrets), async () => (await session) !== undefined);
  const agents = agentCommands({ secrets: context.secrets, service: sessions, store, windowSession: () => session, hooks });
  // The task's tools for chat agents (docs/outside-agents.md): this window's session's, unless proctored.
  const lmTools = new LmToolsFeature({ service: sessions, store, hooks, windowSession: () => session });
  void lmTools.offerWindowSession().catch((e: unknown) => logger.warn(`language-model tools: ${errorMessage(e)}`));
  context.subscriptions.push(
    agents, lmTools, channel, store, sessionIndex, tree, briefs, terminals, idleStopper, taskLint, feasibility, groundTruth, agreement, desk,
    ...register([
      ...taskCommands(store, briefs, sessionIndex, switching),
      openTaskCommand(store, switching),
      ...terminals.commands(),
      ...sessionCommands(() => session),
      exportInspectCommand(() => session),
      ...secretCommands(context.secrets),
      ...agents.commands,
      ...lmTools.commands(),
      ...gapsCommands,
      ...taskLint.commands(),
      ...groundTruth.commands(),
      ...agreement.commands(),
      ...desk.commands(),
      validateTaskCommand(store, async () => (await session) !== undefined),
      ...trajectoryCommands({ store, judgeConfig: () => judgeConfig(context.secrets) }),
    ]),
  );
  // Researcher mode says it is not proctored; the proctored window is served from here or the CLI (issue 13).
  const proctored = proctoredBaselineCommand(store);
  context.subscriptions.push(proctored, notProctoredStatus(session.then((s) => s !== undefined)), ...register([proctored]));
  const briefSerializer = new BriefSerializer((id) => store.find(id), briefs);
  const trajectoryViewer = activateTrajectoryViewer(context, register, { findTask: (id) => store.find(id) });
  context.subscriptions.push(trajectoryViewer);
  // the repository at a step of a run (the viewer's "Repository at this step", "Show diff", "Compare with step…")
  context.subscriptions.push(activateRepoAtStep(register, { findTask: (id) => store.find(id) }));
  const triage = activateTriage(context, register);
  context.subscriptions.push(triage);
  const results = activateResults(context, register, async () => (await store.get()).tasks);
  context.subscriptions.push(results);
  const runSets = activateRunSets(context, register);
  context.subscriptions.push(runSets);
  const setupMs = performance.now() - started;
  logger.info(`workbench set up in ${setupMs.toFixed(1)} ms`);
  return { store, tree, briefSerializer, setupMs, session, gaps, idleStopper, trajectoryViewer, triage, results, agreement, lmTools, desk, runSets };
}

/** The module dist/workbench.js, as the activation stage loads it. */
export interface WorkbenchModule {
  activateWorkbench: typeof activateWorkbench;
}

/** What {@link activateWorkbench} returns (to the activation stage, the extension's own tests and benchmarks). */
export interface WorkbenchApi {
  store: TaskStore;
  /** The Tasks tree's data; the activation stage's tree view shows it. */
  tree: TaskTreeProvider;
  /** Restores brief panels (the activation stage's serializer hands them over). */
  briefSerializer: vscode.WebviewPanelSerializer;
  /** Time spent in {@link activateWorkbench} (after its module loaded), ms. */
  setupMs: number;
  /** This window's task session, once opened (undefined when the window is not on one). */
  session: Promise<ActiveSession | undefined>;
  /** The gaps feature (judge annotations, gap report). */
  gaps: GapsController;
  /** Stops idle work containers (`expbench.container.idleStopMinutes`); tests call its `check`. */
  idleStopper: IdleContainerStopper;
  /** The trajectory viewer (custom editor `expbench.trajectory`, its commands and links). */
  trajectoryViewer: TrajectoryViewer;
  /** Triage across runs: the Trajectories view's data (`expbenchTrajectories`), the triage table, Compare Runs. */
  triage: TriageFeature;
  /** The Results view (`expbench.results.show`): figures of the folder or run set it follows. */
  results: ResultsFeature;
  /** The judge-agreement view (`expbench.review.showAgreement`). */
  agreement: AgreementView;
  /** The curator's desk (`expbench.curation.*`): queue, task pages, edits. */
  desk: CuratorDesk;
  /** The task's tools as language-model tools (docs/outside-agents.md); tests read `prepared`. */
  lmTools: LmToolsFeature;
  /** Run sets (docs/runs.md): the Run Sets view's data and the boards. */
  runSets: RunSetsFeature;
}
