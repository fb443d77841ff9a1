"""Textual's web driver for the apps `convtui serve` runs, whose input thread ends the app when
the app has run out of memory. Textual's own catches every error in that thread, logs it where
no one reads and stops reading: an app that reached its memory limit (tui/web/lifeline.py)
while a flood of keys came in was left running, deaf, until the server gave up on it."""

from __future__ import annotations

from codecs import getincrementaldecoder
from traceback import format_exc

from textual import log
from textual._xterm_parser import XTermParser
from textual.drivers._byte_stream import ByteStream
from textual.drivers.web_driver import WebDriver, _ExitInput

from convtui.tui.web.lifeline import out_of_memory


class StudyWebDriver(WebDriver):
    def run_input_thread(self) -> None:
        """Textual 8.2.8's ``WebDriver.run_input_thread`` (the project pins Textual exactly),
        with a MemoryError ending the app."""
        input_reader = self._input_reader
        parser = XTermParser(debug=self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        byte_stream = ByteStream()
        try:
            for data in input_reader:
                if data:
                    for packet_type, payload in byte_stream.feed(data):
                        if packet_type == "D":
                            for event in parser.feed(decode(payload)):
                                self.process_message(event)
                        else:
                            self._on_meta(packet_type, payload)
                for event in parser.tick():
                    self.process_message(event)
        except _ExitInput:
            pass
        except MemoryError:
            out_of_memory()
        except Exception:
            log(format_exc())
        finally:
            input_reader.close()
