import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { ConfigurationError, requireKnownKeys } from '../core/index.js';
import {
  createKubeClient,
  kubeClientOf,
  ownNamespace,
  readKubeConfig,
  rxkubeUserAgent,
  type KubeClient,
  type KubeConfigData,
} from '../kube/index.js';
import { createLeaderElector, kubeLeaseClient, type LeaderElectionOptions, type LeaderElector } from '../leader/index.js';
import {
  createLogger,
  createMetrics,
  startHealthServer,
  Tracing,
  type HealthCheck,
  type HealthServer,
  type Logger,
  type RxkubeMetrics,
  type TracingOptions,
} from '../observe/index.js';
import { controllerShardingOptions, Shard, shardingConfig, type ShardingOptions } from '../sharding/index.js';
import { checkWebhookServerOptions, startWebhookServer, type WebhookServer, type WebhookServerOptions } from '../webhooks/index.js';
import { InformerPool } from '../cache/index.js';
import { resolveControllerConfig, type ResolvedControllerConfig } from './config.js';
import { Controller, DEFAULT_STOP_TIMEOUT_MS } from './controller.js';
import { RbacCheck, rbacNeeds } from './rbac-check.js';
import type { ControllerConfig, Reconciler, RegisteredController } from './types.js';

/** What `operatorManifests` reads from an operator: its options and its controllers as registered. */
export interface OperatorFacts {
  readonly options: OperatorOptions;
  readonly controllers: readonly ResolvedControllerConfig<KubernetesObject>[];
  /** Where the sharded controllers' member Leases live, one entry per sharded controller (SH1); undefined: the operator's own namespace. */
  readonly shardNamespaces: readonly (string | undefined)[];
}

// Kept beside the class rather than on it: the facts are for manifests, not for the public surface.
const facts = new WeakMap<
  Operator,
  { options: OperatorOptions; controllers: ResolvedControllerConfig<KubernetesObject>[]; shardNamespaces: (string | undefined)[] }
>();

/** The options and registered controllers of `operator` (for `operatorManifests`). */
export function operatorFacts(operator: Operator): OperatorFacts {
  const found = facts.get(operator);
  if (!found) throw new TypeError('operatorFacts: not an Operator');
  return found;
}

export interface OperatorOptions {
  /** Default: KUBECONFIG, ~/.kube/config, or in-cluster. */
  readonly kubeConfig?: KubeConfig | undefined;
  /**
   * What the operator's requests call it: its client's User-Agent is `rxkube/<version> (<name>)`
   * (`operator.client.userAgent`), so the API server's audit log, and a test's request log, tell
   * its requests from anyone else's. Default 'operator'.
   */
  readonly name?: string | undefined;
  readonly logger?: Logger | undefined;
  /** Metrics go to this prom-client registry (never the global one); none without it. */
  readonly registry?: Registry | undefined;
  /** OB4: only the leader processes; others keep warm caches. */
  readonly leaderElection?: Omit<LeaderElectionOptions, 'kubeConfig'> | undefined;
  /**
   * OB3: serve /healthz, /readyz and /metrics on this address. `checks` are readiness checks of
   * the operator's own (a database it needs, say), listed on /readyz beside the controllers'.
   */
  readonly health?:
    | {
        readonly port?: number | undefined;
        readonly host?: string | undefined;
        readonly checks?: Readonly<Record<string, HealthCheck>> | undefined;
      }
    | undefined;
  /** OB5: stop gracefully on SIGTERM and SIGINT. Default false (a library should not own the process). */
  readonly handleSignals?: boolean | undefined;
  /** How long `stop()` waits for runs in flight (default 30 s). */
  readonly stopTimeoutMs?: number | undefined;
  /**
   * SH1–SH4: shard every controller across the replicas running this operator (a controller's
   * own `sharding` overrides it, `sharding: false` opts one out). Off unless given.
   */
  readonly sharding?: ShardingOptions;
  /**
   * Serve these admission and conversion webhooks over HTTPS while the operator runs: started
   * before the controllers (the API server may call them while the caches sync), stopped last.
   * Logs and metrics go to the operator's logger and registry unless given here.
   */
  readonly webhooks?: WebhookServerOptions | undefined;
  /**
   * Every run as an OpenTelemetry trace, and the webhook server's reviews as spans: `true` for the
   * globally registered tracer provider, or `{ tracerProvider }`. Needs the package
   * `@opentelemetry/api`; off by default, and then no OpenTelemetry module is loaded.
   */
  readonly tracing?: TracingOptions | boolean | undefined;
  /**
   * At start, ask the API server (one SelfSubjectAccessReview per verb) whether the operator may do
   * what its controllers were registered for — the rules `operatorManifests` generates. What it may
   * not do is logged as a warning naming the verb, the resource and the rule to add, and fails the
   * `rbac` check of /readyz until it is granted; the operator starts either way. Default true.
   */
  readonly checkRbac?: boolean | undefined;
}

const OPERATOR_OPTIONS = {
  kubeConfig: true,
  name: true,
  logger: true,
  registry: true,
  leaderElection: true,
  health: true,
  handleSignals: true,
  stopTimeoutMs: true,
  sharding: true,
  webhooks: true,
  tracing: true,
  checkRbac: true,
} as const satisfies Record<keyof OperatorOptions, true>;

/**
 * Several controllers sharing one client, informers, logger, metrics registry, leader election
 * and health server. Every request — writes, lists and watches of every informer, the lease — goes
 * through `client` (one connection pool); controllers, secondary sources and dependents that ask
 * for the same informer share one (`InformerPool`). No global state: operators can live side by
 * side in one process.
 */
export class Operator {
  readonly client: KubeClient;
  readonly logger: Logger;
  readonly metrics: RxkubeMetrics | undefined;
  /** What the client was made from: the user's KubeConfig, or the default kubeconfig read as data. */
  private readonly kubeConfig: KubeConfig | KubeConfigData;
  private readonly tracing: Tracing | undefined;
  private readonly informers: InformerPool;
  private readonly controllers: Controller<KubernetesObject>[] = [];
  /** Without leader election always true; with it false until this instance leads (OB4). */
  private readonly leading$: BehaviorSubject<boolean>;
  private elector: LeaderElector | undefined;
  private healthServer: HealthServer | undefined;
  private webhookServer: WebhookServer | undefined;
  private readonly signalHandler = (signal: NodeJS.Signals) => {
    this.logger.info({ signal }, 'shutting down');
    void this.stop();
  };
  private state: 'new' | 'started' | 'stopped' = 'new';

  constructor(private readonly options: OperatorOptions = {}) {
    requireKnownKeys('', options, OPERATOR_OPTIONS);
    requireKnownKeys('health', options.health, { port: true, host: true, checks: true });
    for (const [name, check] of Object.entries(options.health?.checks ?? {})) {
      if (typeof check !== 'function') throw new ConfigurationError(`health.checks.${name}`, 'must be a function returning { ok, reason }');
    }
    if (options.webhooks !== undefined) {
      try {
        checkWebhookServerOptions(options.webhooks);
      } catch (err) {
        if (err instanceof ConfigurationError)
          throw new ConfigurationError(`webhooks.${err.option}`.replace(/\.$/, ''), err.message.slice(err.option.length + 2));
        throw err;
      }
    }
    this.tracing = Tracing.of(options.tracing);
    // Without a KubeConfig of the user's, client-node is loaded only if the kubeconfig needs it (`kubeClientOf`).
    this.kubeConfig = options.kubeConfig ?? readKubeConfig();
    if (
      options.name !== undefined &&
      (typeof options.name !== 'string' || !/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(options.name) || /[()]/.test(options.name))
    ) {
      throw new ConfigurationError('name', `must be printable ASCII without parentheses, got ${JSON.stringify(options.name)}`);
    }
    const clientOptions = { userAgent: rxkubeUserAgent(options.name ?? 'operator') };
    this.client = options.kubeConfig
      ? createKubeClient(options.kubeConfig, clientOptions)
      : kubeClientOf(this.kubeConfig as KubeConfigData, clientOptions);
    this.informers = new InformerPool({ client: this.client });
    this.logger = options.logger ?? createLogger({ name: 'rxkube' });
    this.metrics = options.registry ? createMetrics(options.registry) : undefined;
    this.leading$ = new BehaviorSubject(options.leaderElection === undefined);
    facts.set(this, { options, controllers: [], shardNamespaces: [] });
  }

  /** Validates the configuration (ConfigurationError naming the option) and adds a controller. */
  register<P extends KubernetesObject>(reconciler: Reconciler<P>, config: ControllerConfig<P>): RegisteredController {
    if (this.state !== 'new') throw new Error('register() must be called before start()');
    const namespaces = config?.namespaces === 'own' ? [ownNamespace(this.kubeConfig)] : config?.namespaces;
    const resolved = resolveControllerConfig(reconciler, config && { ...config, namespaces });
    if (this.controllers.some((c) => c.name === resolved.name)) {
      throw new ConfigurationError('name', `a controller named '${resolved.name}' is already registered; give one of them another name`);
    }
    const shard = this.shardFor(resolved.name, config.sharding);
    const controller = new Controller<P>(reconciler, resolved, {
      client: this.client,
      logger: this.logger,
      metrics: this.metrics,
      leading$: this.leading$,
      informers: this.informers,
      shard,
      tracing: this.tracing,
      ...(this.options.leaderElection ? { holdsLeadership: () => this.elector?.holdsLease() ?? false } : {}),
    });
    this.controllers.push(controller as unknown as Controller<KubernetesObject>);
    facts.get(this)?.controllers.push(resolved as unknown as ResolvedControllerConfig<KubernetesObject>);
    return {
      name: controller.name,
      changeNamespaces: (namespaces) => controller.changeNamespaces(namespaces),
      listEventSources: () => controller.listEventSources(),
      get outcome$() {
        return controller.outcome$;
      },
      ...(shard ? { shardStatus$: shard.status$ } : {}),
    };
  }

  /** The controller's shard: its own `sharding`, else the Operator's; none when neither is given or it says `false`. */
  private shardFor(name: string, own: ShardingOptions | false | undefined): Shard | undefined {
    const options = controllerShardingOptions(this.options.sharding, own);
    if (options === undefined) return undefined;
    const defaultNamespace = this.options.leaderElection?.leaseNamespace ?? ownNamespace(this.kubeConfig);
    const config = shardingConfig(name, options, defaultNamespace);
    facts.get(this)?.shardNamespaces.push(options.namespace ?? this.options.leaderElection?.leaseNamespace);
    return new Shard(config, { client: this.client, logger: this.logger });
  }

  /**
   * With `health`: the health server's URL, set as soon as it listens — the first thing `start()`
   * does, before leader election and before the caches sync (so /readyz answers 503 meanwhile).
   * Undefined before `start()`, without `health`, and after `stop()`.
   */
  get healthUrl(): string | undefined {
    return this.healthServer?.url;
  }

  /** With `webhooks`: the webhook server's URL once `start()` has it listening; undefined otherwise. */
  get webhooksUrl(): string | undefined {
    return this.webhookServer?.url;
  }

  /** Whether this instance processes (always true without leader election). */
  get isLeader$(): Observable<boolean> {
    return this.leading$.pipe(distinctUntilChanged());
  }

  /** Starts every controller and waits until their caches have synced (ES2). */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('start() can be called once');
    this.state = 'started';
    const rbac = this.options.checkRbac === false ? undefined : this.rbacCheck();
    // First, so that probes (and `healthUrl`) work while the caches sync: /readyz says 503 until then.
    if (this.options.health) {
      this.healthServer = await startHealthServer({
        port: this.options.health.port,
        host: this.options.health.host,
        registry: this.options.registry,
        checks: {
          ...Object.fromEntries(this.controllers.map((c) => [c.name, () => c.readiness()])),
          ...(rbac ? { rbac: () => rbac.readiness() } : {}),
          ...this.options.health.checks,
        },
        liveness: Object.fromEntries(this.controllers.map((c) => [c.name, () => c.liveness()])),
      });
    }
    if (this.options.webhooks) {
      try {
        this.webhookServer = await startWebhookServer({
          logger: this.logger,
          ...(this.options.registry ? { registry: this.options.registry } : {}),
          ...(this.options.tracing !== undefined ? { tracing: this.options.tracing } : {}),
          ...this.options.webhooks,
        });
      } catch (err) {
        await this.stop();
        throw err;
      }
    }
    if (this.tracing && !this.tracing.hasContextManager()) {
      this.logger.warn(
        "tracing: no OpenTelemetry context manager is registered, so nothing nests under a run's span; register one (NodeSDK and NodeTracerProvider.register() do)",
      );
    }
    if (this.options.handleSignals) {
      process.once('SIGTERM', this.signalHandler);
      process.once('SIGINT', this.signalHandler);
    }
    if (this.options.leaderElection) {
      const election = this.options.leaderElection;
      this.elector = createLeaderElector({
        logger: this.logger,
        leaseClient: kubeLeaseClient(this.client),
        ...election,
        kubeConfig: this.client.kubeConfig,
      });
      this.elector.isLeader$.subscribe((leading) => {
        this.metrics?.setLeader(leading);
        this.leading$.next(leading);
      });
      this.elector.start();
    } else {
      this.metrics?.setLeader(true); // without election, every instance processes
    }
    try {
      await Promise.all([...this.controllers.map((c) => c.start()), rbac?.run()]);
    } catch (err) {
      // One controller that cannot start fails the operator: the others must not keep watching.
      await this.stop();
      throw err;
    }
    this.logger.info({ controllers: this.controllers.map((c) => c.name) }, 'operator started');
  }

  /** The check of what the registered controllers need, in the namespaces they work in (and the leader Lease's). */
  private rbacCheck(): RbacCheck {
    const election = this.options.leaderElection;
    const leaseNamespace = election === undefined ? undefined : election.leaseNamespace || ownNamespace(this.kubeConfig);
    return new RbacCheck(this.client, rbacNeeds({ controllers: operatorFacts(this).controllers, leaseNamespace }), this.logger);
  }

  /** OB5: stop taking events, let runs finish (with a timeout), release the lease, close watches. */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    process.off('SIGTERM', this.signalHandler);
    process.off('SIGINT', this.signalHandler);
    await Promise.all(this.controllers.map((c) => c.stop(this.options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS)));
    this.informers.dispose();
    await this.elector?.stop();
    // Last, with the probes: the API server may call webhooks until the pod is gone.
    await this.webhookServer?.close();
    this.webhookServer = undefined;
    await this.healthServer?.close();
    this.healthServer = undefined;
    this.logger.info('operator stopped');
  }
}
