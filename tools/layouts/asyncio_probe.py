"""Checks the asyncio offsets generate.py measured from layouts.c's mirrors of the private C Task
and Future structs (CPython 3.8-3.13) against live objects of the interpreter itself: run by that
interpreter as `python -c SOURCE FIELDS_JSON`, it reads each field with ctypes where the offset
says and compares it with what Python reports for the same object. Prints one line per mismatch
and exits 1 if there is any; prints "ok N" (the number of checks) otherwise.

The mirrors are taken from CPython's sources by hand, so a patch release that reorders or grows
a struct, or a mistake in a mirror, shows here and not in a target read as nonsense."""
import asyncio
import ctypes
import gc
import json
import sys
import weakref

F = json.loads(sys.argv[1])
V = sys.version_info[:2]
failures = []
checks = 0


def check(what, got, want):
    global checks
    checks += 1
    if got != want:
        failures.append(f"{what}: read {got!r}, expected {want!r}")


def word(address, offset=0):
    return ctypes.c_uint64.from_address(address + offset).value


def i32(address, offset):
    return ctypes.c_int32.from_address(address + offset).value


def byte(address, offset):
    return ctypes.c_uint8.from_address(address + offset).value


def obj(address):
    return ctypes.cast(address, ctypes.py_object).value


async def wait_on(fut):
    await fut


def main():
    import _asyncio
    loop = asyncio.new_event_loop()
    fut = loop.create_future()
    task = loop.create_task(wait_on(fut), name="probe-task")
    loop.run_until_complete(asyncio.sleep(0))
    loop.run_until_complete(asyncio.sleep(0))
    t = id(task)
    for cls, size in ((_asyncio.Task, F["task.size"]), (_asyncio.Future, F["future.size"])):
        check(f"{cls.__name__}.__basicsize__", cls.__basicsize__, size)
        if V < (3, 13):
            check(f"{cls.__name__}.__dictoffset__", cls.__dictoffset__, F["future.dict"])
            check(f"{cls.__name__}.__weakrefoffset__", cls.__weakrefoffset__,
                  F["future.weakreflist"])
    check("task.coro", word(t, F["task.coro"]), id(task.get_coro()))
    check("task.name", word(t, F["task.name"]), id(task.get_name()))
    check("task.fut_waiter", word(t, F["task.fut_waiter"]), id(fut))
    check("future.loop", word(t, F["future.loop"]), id(loop))
    check("future.state (pending)", i32(t, F["future.state"]), 0)
    done, cancelled = loop.create_future(), loop.create_future()
    done.set_result(1)
    cancelled.cancel()
    check("future.state (finished)", i32(id(done), F["future.state"]), 2)
    check("future.state (cancelled)", i32(id(cancelled), F["future.state"]), 1)
    # The awaiting task's wakeup is the first done-callback; another goes to the list.
    def noted(_):
        pass

    fut.add_done_callback(noted)
    check("future.callback0", obj(word(id(fut), F["future.callback0"])), fut._callbacks[0][0])
    callbacks = obj(word(id(fut), F["future.callbacks"]))
    check("future.callbacks", (type(callbacks), callbacks[0][0]), (list, noted))
    check("list.items", word(word(id(callbacks), F["list.items"])), id(callbacks[0]))
    unstarted = loop.create_task(wait_on(fut))
    unstarted.cancel()  # not started: the request waits in must_cancel
    if "task.must_cancel" in F:
        check("task.must_cancel", i32(id(unstarted), F["task.must_cancel"]), 1)
    if "task.num_cancels_requested" in F:
        check("task.num_cancels_requested", i32(id(unstarted), F["task.num_cancels_requested"]),
              unstarted.cancelling())
    ref = weakref.ref(task)
    check("weakref.object", word(id(ref), F["weakref.object"]), t)
    held = [task]

    def closure():
        return held

    check("function.closure", word(id(closure), F["function.closure"]), id(closure.__closure__))
    method = loop.create_future
    check("method.self", word(id(method), F["method.self"]), id(loop))
    import functools
    partial = functools.partial(noted, fut)
    check("partial.args", word(id(partial), F["partial.args"]), id(partial.args))
    check("type.base", word(id(_asyncio.Task), F["type.base"]), id(_asyncio.Future))
    members = {task}
    table, mask = word(id(members), F["set.table"]), word(id(members), F["set.mask"])
    keys = [word(table + i * F["set.entry_size"]) for i in range(mask + 1)]
    check("set.table", t in keys, True)
    check("set.used", word(id(members), F["set.used"]), 1)
    coroutine(task.get_coro())
    task.cancel()
    loop.run_until_complete(asyncio.gather(task, unstarted, return_exceptions=True))
    loop.close()


def coroutine(coro):
    """The suspended coroutine's frame, where the reader finds its line and what it awaits."""
    c = id(coro)
    awaited = id(coro.cr_await)
    if V < (3, 11):
        frame = word(c, F["gen.frame"])
        check("gen.frame", frame, id(coro.cr_frame))
        check("frame.code", word(frame, F["frame.code"]), id(coro.cr_code))
        lasti = i32(frame, F["frame.lasti"]) * (2 if V >= (3, 10) else 1)
        code = coro.cr_code.co_code
        check("code.code", word(id(coro.cr_code), F["code.code"]), id(code))
        check("opcode.yield_from", code[lasti + 2], F["opcode.yield_from"])
        if V < (3, 10):
            top = word(frame, F["frame.stacktop"])
        else:
            check("frame.state", byte(frame, F["frame.state"]), F["frame.state_suspended"])
            top = word(frame, F["frame.valuestack"]) + 8 * i32(frame, F["frame.stackdepth"])
        check("awaited object (stack top)", word(top - 8), awaited)
        return
    frame = c + F["gen.iframe"]
    check("frame.code", word(frame, F["frame.code"]), id(coro.cr_code))
    state = byte(c, F["gen.frame_state"])
    if V < (3, 13):
        check("gen.frame_state", state, F["gen.state_suspended"])
        instr = word(frame, F["frame.instr"])
        resumes = (F["opcode.resume"], F.get("opcode.resume_quick"),
                   F.get("opcode.instrumented_resume"))
        check("opcode.resume", byte(instr, 2) in resumes, True)
    else:
        check("gen.frame_state", state, F["gen.state_suspended_yield_from"])
    top = frame + F["frame.localsplus"] + 8 * i32(frame, F["frame.stacktop_index"])
    check("awaited object (stack top)", word(top - 8), awaited)


gc.disable()  # nothing read may move or go while it is compared
main()
for f in failures:
    print(f)
print(f"ok {checks}" if not failures else f"{len(failures)} of {checks} checks failed")
sys.exit(1 if failures else 0)
