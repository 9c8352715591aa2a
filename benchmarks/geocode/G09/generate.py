# A flood-depth raster (metres, 5 m cells, EPSG:32615) over a river valley
# and building footprints with a replacement value.
r = rng()
rows, cols = 80, 100
yy, xx = np.mgrid[0:rows, 0:cols]
river = 40 + 8 * np.sin(xx / 15.0)
depth = np.clip(2.2 - 0.09 * np.abs(yy - river) + 0.4 * smooth_field((rows, cols), r, sigma=6) - 0.2, 0, None)
x0, y1 = 300000.0, 3300000.0
write_raster("data/flood_depth.tif", depth.astype("float32"), from_origin(x0, y1, 5.0, 5.0), "EPSG:32615", nodata=-1.0)
bld = []
for k in range(120):
    cx, cy = x0 + r.uniform(10, cols * 5 - 10), y1 - r.uniform(10, rows * 5 - 10)
    wd, ht = r.uniform(8, 18), r.uniform(8, 14)
    bld.append(shapely.affinity.rotate(shapely.geometry.box(cx - wd / 2, cy - ht / 2, cx + wd / 2, cy + ht / 2), r.uniform(0, 90)))
gpd.GeoDataFrame({"bldg_id": np.arange(1, 121), "value_usd": (r.uniform(1.5, 6.0, 120) * 1e5).round(-2), "use": r.choice(["residential", "commercial", "public"], 120, p=[0.7, 0.2, 0.1])}, geometry=bld, crs=32615).to_file("data/buildings.shp")
