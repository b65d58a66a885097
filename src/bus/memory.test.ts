import { MemoryBus } from './memory';
import { runBusContract } from './bus.contract';

runBusContract('MemoryBus', async () => {
  const bus = new MemoryBus();
  return { a: bus, b: bus, close: () => bus.close() };
});
