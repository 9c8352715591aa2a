# Copies libpysal's bundled Georgia example (G_utm: 159 counties, 1990
# census shares) into data/ — real data that ship with the sandbox.
import os, shutil
import libpysal
src = os.path.dirname(libpysal.examples.get_path("G_utm.shp"))
for ext in ("shp", "shx", "dbf", "cpg"):
    shutil.copyfile(os.path.join(src, f"G_utm.{ext}"), f"data/G_utm.{ext}")
