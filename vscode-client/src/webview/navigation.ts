// The zoom path above the graph (breadcrumb) and the details bar below it (the zoomed node's
// share and source link). Both are rebuilt only when the zoom or the view changed: new data only
// rewrites the share, since replacing the link while live would lose clicks on it (a click is a
// mousedown and a mouseup on one element), and hovering must not replace the buttons.

import { CallNode, KeyInfo, locationLabel } from '../model/profile';
import { el, pct } from './dom';
import type { FlameGraph } from './flame';

export interface NavigationEvents {
  zoomTo(node: CallNode): void;
  openSource(info: KeyInfo): void;
}

export class Navigation {
  readonly crumbsEl = el('nav', { id: 'breadcrumb', className: 'breadcrumb' });
  readonly detailsEl = el('div', { id: 'details', className: 'details' });
  private crumbKey = '';
  private detailsKey = '';
  /** The share of the zoomed node in the details bar, updated in place as data arrives. */
  private detailsShare: Text | undefined;

  constructor(
    private readonly graph: FlameGraph,
    private readonly resetEl: HTMLButtonElement,
    private readonly infoOf: (node: CallNode) => KeyInfo,
    private readonly events: NavigationEvents,
  ) {
    this.crumbsEl.setAttribute('aria-label', 'Zoom path');
  }

  /** Forgets what is shown, so that the next update rebuilds both. */
  clear(): void {
    this.crumbKey = this.detailsKey = '';
  }

  /** `view`: what else selects the tree (grouping, thread, debugger filter). */
  update(view: string): void {
    this.updateBreadcrumb(view);
    this.updateDetails(view);
  }

  private updateBreadcrumb(view: string): void {
    const zoom = this.graph.zoomNode();
    const key = `${zoom?.path().join(',')}:${this.graph.tree === undefined}:${view}:${this.graph.rootLabel}`;
    if (key === this.crumbKey) return;
    this.crumbKey = key;
    const chain: CallNode[] = [];
    for (let n: CallNode | null | undefined = zoom; n; n = n.parent) chain.push(n);
    chain.reverse();
    const items: Node[] = [];
    chain.forEach((n, i) => {
      if (i > 0) items.push(el('span', { className: 'sep', textContent: '›' }));
      const label = n.parent === null ? this.graph.rootLabel : this.infoOf(n).function;
      const b = el('button', { className: 'crumb', textContent: label, title: n.parent === null ? 'Reset zoom' : locationLabel(this.infoOf(n)) });
      b.addEventListener('click', () => this.events.zoomTo(n));
      items.push(b);
    });
    this.crumbsEl.replaceChildren(...items);
    this.resetEl.disabled = chain.length <= 1;
  }

  private updateDetails(view: string): void {
    const zoom = this.graph.zoomNode();
    const share = () => ` ${pct(zoom!.total, this.graph.tree!.root.total)} of samples · `;
    const key = `${zoom?.path().join(',')}:${view}`;
    if (key === this.detailsKey) {
      if (this.detailsShare && zoom) this.detailsShare.data = share();
      return;
    }
    this.detailsKey = key;
    this.detailsShare = undefined;
    if (!zoom || zoom.parent === null) {
      this.detailsEl.replaceChildren(el('span', { className: 'hint', textContent: 'Click a node to zoom in, Ctrl+click to open its source (keys: Tab to the graph, arrows, Enter, Ctrl+Enter). Escape zooms out.' }));
      return;
    }
    const info = this.infoOf(zoom);
    this.detailsShare = document.createTextNode(share());
    const parts: (Node | string)[] = [el('strong', { textContent: info.function }), this.detailsShare];
    if (info.file && !info.native) {
      const a = el('a', { href: '#', className: 'open-source', textContent: locationLabel(info), title: 'Open source' });
      a.addEventListener('click', (e) => {
        e.preventDefault();
        this.events.openSource(info);
      });
      parts.push(a);
    } else parts.push(locationLabel(info));
    this.detailsEl.replaceChildren(...parts);
  }
}
