"""An asyncio service in miniature for the async sampling benchmark: one task that always runs
(a CPU-bound handler DEPTH frames deep, stepping back into the loop every 50 ms) and WAITING
tasks, each in a TaskGroup under one of WAITING // 10 + 1 parents, awaiting an event.

usage: async_work.py DEPTH WAITING  -- prints "ready" once every task has started
"""
import asyncio
import sys
import time

depth = int(sys.argv[1])
waiting = int(sys.argv[2])
sys.setrecursionlimit(depth + 1000)


def recurse(n, until):
    if n > 1:
        return recurse(n - 1, until)
    x = 0
    while time.monotonic() < until:
        x += 1
    return x


async def busy():
    while True:
        recurse(depth, time.monotonic() + 0.05)
        await asyncio.sleep(0)


async def parent(children, forever):
    async with asyncio.TaskGroup() as tg:
        for i in range(children):
            tg.create_task(forever.wait(), name=f"waiter-{i}")


async def main():
    forever = asyncio.Event()
    groups = waiting // 10 + 1
    async with asyncio.TaskGroup() as tg:
        tg.create_task(busy(), name="busy")
        for g in range(groups):
            n = waiting // groups + (1 if g < waiting % groups else 0)
            tg.create_task(parent(n, forever), name=f"parent-{g}")
        for _ in range(3):
            await asyncio.sleep(0)
        print("ready", flush=True)


asyncio.run(main())
