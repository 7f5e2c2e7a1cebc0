import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/**
 * Reads `load()` now and again every `refreshMs` while the tab is visible (the page
 * refreshes by itself, without reloading). Keeps the last good answer when a read fails, so the
 * page can say "unreachable since …, showing what was read at …". `reload()` reads at once.
 */
export function usePoll(load, deps, refreshMs) {
  const [state, setState] = useState({ data: undefined, readAtMs: null, error: null, failingSinceMs: null });
  const generation = useRef(0);

  const read = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const data = await load();
      if (mine !== generation.current) return;
      setState({ data, readAtMs: Date.now(), error: null, failingSinceMs: null });
    } catch (error) {
      if (mine !== generation.current) return;
      setState((previous) => ({ ...previous, error, failingSinceMs: previous.failingSinceMs ?? Date.now() }));
    }
  }, deps);

  useEffect(() => {
    setState({ data: undefined, readAtMs: null, error: null, failingSinceMs: null });
    read();
    const timer = setInterval(() => {
      if (document.visibilityState !== 'hidden') read();
    }, refreshMs);
    return () => {
      clearInterval(timer);
      generation.current += 1;
    };
  }, [read, refreshMs]);

  return { ...state, reload: read };
}
