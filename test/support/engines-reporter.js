/**
 * jest reporter: after the summary, one block naming the engines of the run and every suite
 * not run, why, and the command that enables it (engines.js decides; jest.config.js passes it).
 */
'use strict';
const { notRunBlock } = require('./engines');

class EnginesReporter {
  constructor(_globalConfig, options) {
    this.options = options;
  }
  onRunComplete() {
    // jest's summary reporter runs after every custom one: print below it, as the last words.
    const block = notRunBlock(this.options.plan, this.options.notRun);
    process.once('exit', () => process.stderr.write(`${block}\n`));
  }
}
module.exports = EnginesReporter;
