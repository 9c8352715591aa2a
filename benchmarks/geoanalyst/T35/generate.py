# Hills north-east of Santa Rosa (UTM 10N, 30 m): a DEM, two Landsat 8-like
# seven-band scenes before and after a fire whose severity fades from its
# core, and NLCD 2011 land cover on NLCD's Albers grid.
from rasterio.warp import calculate_default_transform, reproject, Resampling
r = rng()
shape = (300, 300)
transform = from_origin(520_000, 4_268_000, 30, 30)
dem = 60 + 600 * smooth_field(shape, r, 12) + 250 * smooth_field(shape, rng(1), 4) + 350 * blob(shape, (80, 220), 50)
write_raster("data/DEM_30m.tif", dem.astype("float32"), transform, "EPSG:32610", nodata=-9999.0)
wild = smooth_field(shape, rng(2), 15)
lc = np.select([wild > 0.7, wild > 0.55, wild > 0.42, wild > 0.3, wild > 0.22], [42, 43, 52, 71, 81], 82).astype("uint8")
town = blob(shape, (250, 40), 45)
lc[town > 0.3] = 22; lc[town > 0.55] = 23; lc[town > 0.8] = 24; lc[(town > 0.15) & (town <= 0.3)] = 21
lc[smooth_field(shape, rng(3), 5) > 0.9] = 11
lc[(wild < 0.25) & (smooth_field(shape, rng(4), 4) > 0.8)] = 90
lc[smooth_field(shape, rng(5), 3) > 0.93] = 31
left, top = transform.c, transform.f
bounds = (left, top - 30 * shape[0], left + 30 * shape[1], top)
at, w, h = calculate_default_transform("EPSG:32610", "EPSG:5070", shape[1], shape[0], *bounds, resolution=30)
nlcd = np.zeros((h, w), dtype="uint8")
reproject(lc, nlcd, src_transform=transform, src_crs="EPSG:32610", dst_transform=at, dst_crs="EPSG:5070",
          resampling=Resampling.nearest, src_nodata=0, dst_nodata=0)
write_raster("data/Sonoma_NLCD2011.tif", nlcd, at, "EPSG:5070", nodata=0)
severity = np.clip(1.3 * blob(shape, (110, 170), 60) + 0.3 * (smooth_field(shape, rng(6), 6) - 0.5), 0, 1)
veg = np.isin(lc, [41, 42, 43, 52, 71, 81, 82, 90])
base = np.stack([np.full(shape, v) for v in (0.03, 0.04, 0.06, 0.05, 0.30, 0.18, 0.10)])
base[4] = np.where(veg, 0.28 + 0.08 * wild, 0.18); base[6] = np.where(veg, 0.09, 0.16)
noise = lambda k: 0.01 * rng(10 + k).standard_normal((7,) + shape)
before = base + noise(0)
after = base.copy()
after[4] = base[4] - 0.16 * severity * veg; after[6] = base[6] + 0.14 * severity * veg
after[3] = base[3] + 0.05 * severity * veg
after = after + noise(1)
write_raster("data/Before_L8.tif", np.clip(before * 10000, 1, 10000).astype("uint16"), transform, "EPSG:32610")
write_raster("data/After_L8.tif", np.clip(after * 10000, 1, 10000).astype("uint16"), transform, "EPSG:32610")
