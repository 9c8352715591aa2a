import rasterio
from rasterio.features import rasterize
from rasterio.warp import calculate_default_transform, reproject, Resampling
from rasterio.transform import from_origin
soils = gpd.read_file("data/mc_soils.shp").to_crs(32126)
boundary = gpd.read_file("data/mc_boundary.shp").to_crs(32126)
with rasterio.open("data/mc_land_cover.tif") as src:
    transform, width, height = calculate_default_transform(src.crs, "EPSG:32126", src.width, src.height, *src.bounds, resolution=100)
    lc = np.zeros((height, width), dtype="uint8")
    reproject(rasterio.band(src, 1), lc, dst_transform=transform, dst_crs="EPSG:32126", resampling=Resampling.nearest, dst_nodata=0)
# the county's extent, snapped to the projected land-cover grid
minx, miny, maxx, maxy = boundary.total_bounds
left = transform.c + np.floor((minx - transform.c) / 100) * 100
top = transform.f - np.floor((transform.f - maxy) / 100) * 100
cols = int(np.ceil((maxx - left) / 100)); rows = int(np.ceil((top - miny) / 100))
grid = from_origin(left, top, 100, 100)
print(lc.shape, (rows, cols))
# %%
classes = sorted(soils["drclassdcd"].dropna().unique())
code = {c: i + 1 for i, c in enumerate(classes)}
drain = rasterize(zip(soils.geometry, soils["drclassdcd"].map(code)), out_shape=(rows, cols), transform=grid, fill=0)
known = soils[soils["wdepannmin"].notna()]
depth = rasterize(zip(known.geometry, known["wdepannmin"].astype(float)), out_shape=(rows, cols), transform=grid, fill=-1, dtype="float32")
# %%
drain_score = np.select([drain == 1, drain == 2, drain == 3, drain == 4, drain == 5], [3, 1, 4, 5, 2], np.nan)
depth_score = np.select([depth < 0, depth < 10, depth < 33, depth < 61, depth < 80, depth <= 92], [np.nan, 5, 4, 3, 2, 1], np.nan)
inside = rasterize(boundary.geometry, out_shape=(rows, cols), transform=grid) == 1
vulnerable = np.where(inside, 5 * drain_score + 4 * depth_score, np.nan)
with rasterio.open("pred_results/vulnerable_areas.tif", "w", driver="GTiff", height=rows, width=cols, count=1, dtype="float32",
                   crs="EPSG:32126", transform=grid, nodata=-9999.0, compress="deflate") as dst:
    dst.write(np.where(np.isnan(vulnerable), -9999.0, vulnerable).astype("float32"), 1)
print(np.nanmin(vulnerable), np.nanmax(vulnerable), np.isfinite(vulnerable).sum())
