"""Closes the X11 windows of a process the way a window manager's close button does.

    python3 close-window.py PID

Sends WM_DELETE_WINDOW to every top-level window whose _NET_WM_PID is PID and that takes
that protocol (GTK turns it into delete-event, Tauri into CloseRequested). Standard library
only (ctypes + libX11). Prints how many windows it asked; exit 1 if none.

WebDriver's Close Window is no substitute: WebKit then emits the web view's `close` signal,
which wry answers by destroying the web view alone, and WebKitWebDriver, left without a
browsing context, kills the app.
"""

import ctypes
import ctypes.util
import sys

CLIENT_MESSAGE = 33
XA_CARDINAL = 6
Window = ctypes.c_ulong
Atom = ctypes.c_ulong


class XClientMessageEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", XClientMessageEvent), ("pad", ctypes.c_long * 24)]


def main():
    pid = int(sys.argv[1])
    x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11") or "libX11.so.6")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XDefaultRootWindow.restype = Window
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XInternAtom.restype = Atom
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XQueryTree.argtypes = [ctypes.c_void_p, Window] + [ctypes.c_void_p] * 4
    x.XGetWindowProperty.argtypes = [ctypes.c_void_p, Window, Atom, ctypes.c_long, ctypes.c_long, ctypes.c_int, Atom] + [
        ctypes.c_void_p
    ] * 5
    x.XGetWMProtocols.argtypes = [ctypes.c_void_p, Window, ctypes.c_void_p, ctypes.c_void_p]
    x.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
    x.XFree.argtypes = [ctypes.c_void_p]
    x.XFlush.argtypes = [ctypes.c_void_p]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]

    display = x.XOpenDisplay(None)
    if not display:
        sys.exit("cannot open the X display")
    net_wm_pid = x.XInternAtom(display, b"_NET_WM_PID", False)
    wm_protocols = x.XInternAtom(display, b"WM_PROTOCOLS", False)
    wm_delete = x.XInternAtom(display, b"WM_DELETE_WINDOW", False)

    root, parent = Window(), Window()
    children, count = ctypes.POINTER(Window)(), ctypes.c_uint()
    x.XQueryTree(display, x.XDefaultRootWindow(display), ctypes.byref(root), ctypes.byref(parent),
                 ctypes.byref(children), ctypes.byref(count))
    asked = 0
    for i in range(count.value):
        window = children[i]
        if window_pid(x, display, window, net_wm_pid) != pid or not takes(x, display, window, wm_delete):
            continue
        event = XEvent()
        event.xclient.type = CLIENT_MESSAGE
        event.xclient.window = window
        event.xclient.message_type = wm_protocols
        event.xclient.format = 32
        event.xclient.data[0] = wm_delete
        x.XSendEvent(display, window, False, 0, ctypes.byref(event))
        asked += 1
    if children:
        x.XFree(children)
    x.XFlush(display)
    x.XCloseDisplay(display)
    print(f"asked {asked} window(s) of pid {pid} to close")
    sys.exit(0 if asked else 1)


def window_pid(x, display, window, net_wm_pid):
    actual_type, actual_format = Atom(), ctypes.c_int()
    nitems, after = ctypes.c_ulong(), ctypes.c_ulong()
    data = ctypes.POINTER(ctypes.c_ulong)()
    status = x.XGetWindowProperty(display, window, net_wm_pid, 0, 1, False, XA_CARDINAL, ctypes.byref(actual_type),
                                  ctypes.byref(actual_format), ctypes.byref(nitems), ctypes.byref(after),
                                  ctypes.byref(data))
    try:
        return data[0] if status == 0 and nitems.value == 1 and actual_format.value == 32 else None
    finally:
        if data:
            x.XFree(data)


def takes(x, display, window, protocol):
    protocols, count = ctypes.POINTER(Atom)(), ctypes.c_int()
    if not x.XGetWMProtocols(display, window, ctypes.byref(protocols), ctypes.byref(count)):
        return False
    try:
        return any(protocols[i] == protocol for i in range(count.value))
    finally:
        x.XFree(protocols)


if __name__ == "__main__":
    main()
