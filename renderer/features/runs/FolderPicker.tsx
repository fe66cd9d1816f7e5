import { useState } from 'react';
import { useApp } from '../../store';

/** Shown when no folder is open (the desktop app before the first pick). */
export function FolderPicker() {
  const openFolder = useApp((s) => s.openFolder);
  const [path, setPath] = useState('');
  return (
    <form
      className="folder-picker"
      onSubmit={(e) => {
        e.preventDefault();
        if (path.trim()) void openFolder(path.trim());
      }}
    >
      <label>
        Runs folder{' '}
        <input
          className="input mono"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder="/path/to/runs"
        />
      </label>
      <button type="submit" className="btn">
        Open
      </button>
    </form>
  );
}
