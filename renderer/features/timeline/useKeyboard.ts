import { useEffect } from 'react';
import { useApp } from '../../store';
import type { RunTab } from '../../store/uiSlice';
import { stepConversation } from '../conversation/ConversationView';

/** The keys below: only these open a run's view early. */
const KEYS = new Set(
  'ArrowRight j J ArrowLeft k K ArrowDown ArrowUp PageDown PageUp Home End g / f ?'.split(' '),
);

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
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      let s = useApp.getState();
      if (!s.runId || (s.view !== 'run' && s.view !== 'home')) return;
      if (s.overlay && e.key !== 'Escape') return;
      if (s.view === 'home') {
        if (!KEYS.has(e.key)) return;
        // Home with a run is a run being opened (goHome forgets the run).
        s.showRun();
        s = useApp.getState();
      }
      const stepAway = (fn: () => void) => {
        e.preventDefault();
        if (s.follow) s.setFollow(false);
        fn();
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
          e.preventDefault();
          return s.jumpEdge('last');
        case 'g':
          e.preventDefault();
          return s.setOverlay('goto');
        case '/':
          e.preventDefault();
          return s.setOverlay('search');
        case 'f':
          e.preventDefault();
          return s.setOverlay('filter');
        case '?':
          e.preventDefault();
          return s.setOverlay('help');
        case 'Escape':
          return s.setOverlay(null);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [tab]);
}
