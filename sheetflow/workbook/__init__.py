"""Rater workbooks: the layout contract, the writer (xlsxwriter) and the reader."""
