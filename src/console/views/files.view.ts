import { html } from '../html.js';
import { formField } from './components.js';
import { Screen } from './layout.js';

/** Upload a file, or open one by id (`fileID`: the id asked for last, kept in the field). */
export function filesView(fileID = ''): Screen {
  return new Screen(
    'Files',
    html`<h2>Upload</h2>
<form method="post" action="/console/files" enctype="multipart/form-data" class="stack" hx-encoding="multipart/form-data">
${formField({ name: 'file', label: 'File', type: 'file', attributes: html`required` })}
<p><button type="submit">Upload</button></p>
<progress id="upload-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
</form>
<h2>Open a file</h2>
<form method="get" action="/console/files/open" class="row">
${formField({ name: 'fileID', label: 'File id', value: fileID, attributes: html`maxlength="36" required` })}
<button type="submit">Open</button>
</form>`,
  );
}

export interface FileModel {
  fileID: string;
  name: string | null;
  size: number;
  sha256: string;
}

export function fileView({ fileID, name, size, sha256 }: FileModel): Screen {
  return new Screen(
    'File',
    html`<dl>
<dt>Id</dt><dd class="mono">${fileID}</dd>
<dt>Name</dt><dd>${name ?? '(none)'}</dd>
<dt>Size</dt><dd>${size.toLocaleString('en')} bytes</dd>
<dt>SHA-256</dt><dd class="mono">${sha256}</dd>
</dl>
<p><a href="/console/files/${fileID}/content" hx-boost="false" download>Download</a></p>`,
  );
}
