# Removes the georeferencing of the two scenes written by T03's generator:
# the pixels stay, the CRS and the geotransform go (as an image exported
# from a viewer would be). Deterministic: same input bytes, same output.
import warnings
import rasterio
from rasterio.errors import NotGeoreferencedWarning
for name in ("G_2014", "G_2015"):
    path = f"data/{name}.tif"
    with rasterio.open(path) as src:
        pixels = src.read()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotGeoreferencedWarning)
        with rasterio.open(path, "w", driver="GTiff", height=pixels.shape[1], width=pixels.shape[2],
                           count=pixels.shape[0], dtype=pixels.dtype, compress="deflate") as dst:
            dst.write(pixels)
