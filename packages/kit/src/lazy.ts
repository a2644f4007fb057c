/**
 * A value made at its first use and kept: above all a module that a service needs for one backend or
 * one tool only, required when first asked for (`const pg = lazy(() => require('pg') as typeof Pg)`),
 * so that an idle process never holds it. `loaded` says whether it has been made yet.
 */
export interface Lazy<T> {
  (): T;
  readonly loaded: boolean;
}

export function lazy<T>(make: () => T): Lazy<T> {
  let made = false;
  let value: T;
  const get = (): T => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
  return Object.defineProperty(get, 'loaded', { get: () => made }) as Lazy<T>;
}
