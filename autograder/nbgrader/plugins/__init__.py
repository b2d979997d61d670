"""nbgrader's plugins as the course configures them: late penalties, zip_collect's extractor and collectors, and
export's CSV and Canvas files (one plugin idea per file)."""
