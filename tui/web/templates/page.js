// The study page's own script (no script on our pages is inline: the CSP allows none).
(() => {
  // The terminal's text is the model's and the task's, never a link to follow: xterm.js
  // makes every URL in it clickable (and would follow OSC 8 links), opening it through
  // window.open. Nothing else here opens a window (the server passes no URL or file from
  // the app to the page, tui/web/apps.py), so none opens at all.
  window.open = () => null;
  const terminal = document.getElementById("terminal");
  // The app's socket is beside this page, whatever host, prefix or TLS proxy it is reached
  // through: ws for http, wss for https.
  terminal.dataset.sessionWebsocketUrl =
    new URL("ws", window.location.href).href.replace(/^http/, "ws");
  document.getElementById("reopen").addEventListener("click", () => window.location.reload());
  // When the server ends the app on purpose (another tab took over, the token changed, the
  // server is full or stopping) it says why in one message before closing: show that.
  const Native = window.WebSocket;
  let place = Infinity;
  function Told(url, protocols) {
    const socket = protocols === undefined ? new Native(url) : new Native(url, protocols);
    // Keys typed while the socket still opens are held and sent once it is open: the page
    // has focus from the start, and nothing a person types then is lost.
    const send = socket.send.bind(socket);
    const held = [];
    socket.send = (data) => {
      if (socket.readyState === Native.CONNECTING) held.push(data);
      else send(data);
    };
    socket.addEventListener("open", () => held.splice(0).forEach(send));
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      let message;
      try { message = JSON.parse(event.data); } catch (error) { return; }
      if (Array.isArray(message) && message[0] === "convtui_ended") {
        document.getElementById("why").textContent = String(message[1]);
      }
      // Others' apps start first: the place in line, which only ever moves up (two messages
      // may cross, so the lowest one heard is the place).
      if (Array.isArray(message) && message[0] === "convtui_queued") {
        const ahead = Number(message[1]);
        if (Number.isInteger(ahead) && ahead >= 0 && ahead < place) {
          place = ahead;
          document.getElementById("queue").textContent =
            `Apps are starting for people who came first: yours is number ${ahead + 1} in line.`;
        }
      }
    });
    return socket;
  }
  Told.prototype = Native.prototype;
  // The terminal takes the keys as soon as it exists (textual.js makes it on load), without
  // a click first; the app hears of the focus as the socket opens.
  window.addEventListener("load", () => {
    const keys = document.querySelector(".xterm-helper-textarea");
    if (keys) keys.focus();
  });
  Object.assign(Told, { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
  window.WebSocket = Told;
})();
