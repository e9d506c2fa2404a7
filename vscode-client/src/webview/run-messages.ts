// What each message of the extension (messages.ts) does to the page: the run it shows starts,
// its batches arrive (aggregated into the model as they come), the whole run so far is replayed
// to a page that missed it, the run stops or fails; and the requests to reveal a function or to
// compare with a baseline.

import type { App } from './app';
import type { ToWebview } from './messages';

export function applyMessage(app: App, msg: ToWebview): void {
  switch (msg.type) {
    case 'idle':
      app.clearRun();
      app.state = 'idle';
      app.idleMessage = msg.message;
      break;
    case 'run':
      app.clearRun();
      app.run = msg.run;
      app.state = 'waiting';
      break;
    case 'data':
      app.model.addBatch(msg.body);
      if (app.state === 'waiting' || app.state === 'idle') app.state = 'live';
      break;
    case 'replay':
      // The same path as live data, so that a late view equals one that saw the whole stream.
      app.clearRun();
      app.run = msg.run;
      for (const body of msg.bodies) app.model.addBatch(body);
      app.omittedSamples = msg.omittedSamples;
      app.stopped = msg.stopped;
      app.errorMessage = msg.error ?? '';
      app.state = msg.error ? 'error' : msg.stopped ? 'stopped' : msg.bodies.length > 0 ? 'live' : 'waiting';
      break;
    case 'stopped':
      app.stopped = msg.stopped;
      if (msg.stopped.reason === 'error') {
        app.state = 'error';
        app.errorMessage = msg.stopped.message ?? 'Sampling failed.';
      } else app.state = 'stopped';
      break;
    case 'error':
      app.state = 'error';
      app.errorMessage = msg.message;
      break;
    case 'reveal':
      app.reveal(msg);
      return;
    case 'baseline':
      app.compareWith(app.baselines.give(msg.label, msg.bodies));
      return;
  }
  app.changed();
}
