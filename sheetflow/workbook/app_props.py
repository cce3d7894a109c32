"""The xlsxwriter workbook every workbook sheetflow writes is made with.

Its ``docProps/app.xml`` names sheetflow as the application that wrote the file, not
"Microsoft Excel" with a version (xlsxwriter's default, a claim about a program that
never touched it). The packs, ``validation.xlsx``, ``analysis.xlsx``, the feedback
workbooks and ``plan.xlsx`` all come from :class:`SheetflowWorkbook`, so none of them
says otherwise. The rest of each file is xlsxwriter's, byte for byte: a workbook that
was deterministic stays so.

Imports nothing of sheetflow's: every stage that writes a workbook can use it.
"""

from __future__ import annotations

import xlsxwriter
from xlsxwriter.app import App
from xlsxwriter.packager import Packager

APPLICATION = "sheetflow"
"""What ``<Application>`` in ``docProps/app.xml`` says."""


class SheetflowApp(App):
    """``docProps/app.xml`` naming sheetflow as the application, with no Excel version
    (``AppVersion`` is optional and would claim one)."""

    def _write_application(self) -> None:
        self._xml_data_element("Application", APPLICATION)

    def _write_app_version(self) -> None:
        pass


class SheetflowPackager(Packager):
    """xlsxwriter's packager writing :class:`SheetflowApp` as ``docProps/app.xml``.

    The parts listed are those of xlsxwriter's own ``_write_app_file``, in its order:
    the worksheets not very hidden, the chart sheets (the plan's chart), then the
    defined names.
    """

    def _write_app_file(self) -> None:
        app = SheetflowApp()
        sheets = self.workbook.worksheets()
        shown = [ws.name for ws in sheets if not ws.is_chartsheet and ws.hidden != 2]
        for name in shown:
            app._add_part_name(name)
        app._add_heading_pair(["Worksheets", len(shown)])
        for ws in sheets:
            if ws.is_chartsheet:
                app._add_part_name(ws.name)
        app._add_heading_pair(["Charts", self.chartsheet_count])
        if self.named_ranges:
            app._add_heading_pair(["Named Ranges", len(self.named_ranges)])
        for name in self.named_ranges:
            app._add_part_name(name)
        app._set_properties(self.workbook.doc_properties)
        app.doc_security = self.workbook.read_only
        app._set_xml_writer(self._filename("docProps/app.xml"))
        app._assemble_xml_file()


class SheetflowWorkbook(xlsxwriter.Workbook):
    """An ``xlsxwriter.Workbook`` whose ``docProps/app.xml`` names sheetflow."""

    def _get_packager(self) -> Packager:
        return SheetflowPackager()
