import { useEffect } from 'react';
import { useApp } from '../../store';
import type { RunTab } from '../../store/uiSlice';
import { stepConversation } from '../conversation/ConversationView';

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el) return false;
  return (
    el.isContentEditable || el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT'
  );
}

/**
 * Timeline keys: ←/→ j/k step, Shift jumps between notable events, Home/End, g, /, f. Listened for
 * by the app, not the run's view: a run opened from the list waits up to 300 ms for its first
 * events before its view is drawn (store/timelineSlice.ts), and a key pressed then shows the view
 * at once and acts on it, instead of going nowhere.
 */
export function useTimelineKeys(tab: RunTab = 'timeline'): void {
  useEffect(() => {
    // In the conversation, a step goes to the next thing it shows (prompt, text, call, result).
    const step = (delta: 1 | -1) =>
      tab === 'conversation' ? void stepConversation(delta) : useApp.getState().step(delta);
    type State = ReturnType<typeof useApp.getState>;
    /** What a key does to the run, to be done; null for a key that is not the run's. */
    const keyAction = (e: KeyboardEvent, s: State): (() => void) | null => {
      const stepAway = (fn: () => void) => () => {
        e.preventDefault();
        if (s.follow) s.setFollow(false);
        fn();
      };
      const overlay = (o: Parameters<State['setOverlay']>[0]) => () => {
        e.preventDefault();
        s.setOverlay(o);
      };
      switch (e.key) {
        case 'ArrowRight':
        case 'j':
        case 'J':
          return stepAway(() => (e.shiftKey ? void s.jumpNotable(1) : step(1)));
        case 'ArrowLeft':
        case 'k':
        case 'K':
          return stepAway(() => (e.shiftKey ? void s.jumpNotable(-1) : step(-1)));
        case 'ArrowDown':
          return stepAway(() => step(1));
        case 'ArrowUp':
          return stepAway(() => step(-1));
        case 'PageDown':
          return stepAway(() => s.step(25));
        case 'PageUp':
          return stepAway(() => s.step(-25));
        case 'Home':
          return stepAway(() => s.jumpEdge('first'));
        case 'End':
          return () => {
            e.preventDefault();
            s.jumpEdge('last');
          };
        case 'g':
          return overlay('goto');
        case '/':
          return overlay('search');
        case 'f':
          return overlay('filter');
        case '?':
          return overlay('help');
        case 'Escape':
          return () => s.setOverlay(null);
        default:
          return null;
      }
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      const s = useApp.getState();
      if (!s.runId || (s.view !== 'run' && s.view !== 'home')) return;
      if (s.overlay && e.key !== 'Escape') return;
      const act = keyAction(e, s);
      if (!act) return;
      if (s.view === 'home') {
        // Home with a run is a run being opened (goHome forgets the run): its view, at once.
        if (e.key === 'Escape') return;
        s.showRun();
      }
      act();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [tab]);
}
