import { ConfigurationError, describeValue } from './errors.js';

// Small assertions for option validation; each throws a ConfigurationError naming the option.

export function requirePositiveInteger(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(option, `must be a positive integer, got ${describeValue(value)}`);
  }
  return value;
}

/** A finite duration in milliseconds, strictly positive. */
export function requirePositiveDuration(option: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(option, `must be a finite number of milliseconds > 0, got ${describeValue(value)}`);
  }
  return value;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A namespace name: a lowercase DNS label of at most 63 characters. */
export function requireNamespaceName(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 63 || !DNS_LABEL.test(value)) {
    throw new ConfigurationError(option, `${describeValue(value)} is not a valid namespace name (a lowercase DNS label)`);
  }
  return value;
}

export function requireFunction<F>(option: string, value: F): F {
  if (typeof value !== 'function') {
    throw new ConfigurationError(option, `must be a function, got ${describeValue(value)}`);
  }
  return value;
}

/** An object that has every listed method. */
export function requireMethods<T>(option: string, value: T, methods: readonly string[]): T {
  const missing = methods.filter(
    (name) => typeof value !== 'object' || value === null || typeof (value as Record<string, unknown>)[name] !== 'function',
  );
  if (missing.length > 0) {
    throw new ConfigurationError(
      option,
      `must be an object with method${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, got ${describeValue(value)}`,
    );
  }
  return value;
}
