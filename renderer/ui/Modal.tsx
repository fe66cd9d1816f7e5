import { useEffect, useRef } from 'react';

/** Escape closes a dialog wherever the focus is. */
export function useEscape(fn: () => void): void {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') latest.current();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

interface ModalProps {
  title: string;
  /** The dialog's accessible name. */
  label: string;
  testId: string;
  className?: string;
  onClose: () => void;
  /** Whether a click beside the dialog closes it (not for a dialog holding work in progress). */
  closeOnBackdrop?: boolean;
  children: React.ReactNode;
}

/** A dialog over the app: backdrop, title with a close button; Escape closes it. */
export function Modal({
  title,
  label,
  testId,
  className,
  onClose,
  closeOnBackdrop = true,
  children,
}: ModalProps) {
  useEscape(onClose);
  return (
    <div className="modal-backdrop" onClick={closeOnBackdrop ? onClose : undefined}>
      <div
        className={className ? `modal ${className}` : 'modal'}
        role="dialog"
        aria-label={label}
        data-testid={testId}
        onClick={(e) => e.stopPropagation()}
      >
        <div className="popover-title">
          {title}
          <button type="button" className="btn ghost small" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}
