# Marion County-like soils (NAD83 geographic), county boundary and 100 m NLCD
# land cover (NAD83 / Oregon North): a river valley with shallow water and
# poorly drained soils, a town, farmland and forested hills.
r = rng()
crs = "EPSG:32126"
cx, cy = 2_330_000.0, 130_000.0
county = organic_polygon(cx, cy, 24_000.0, r, irregularity=0.2)
gpd.GeoDataFrame({"OBJECTID_1": [1], "AREA": [county.area], "PERIMETER": [county.length], "BLMCNTYO_": [24],
                  "BLMCNTYO_I": [24], "COUNTY_NAM": ["Marion"], "COBCODE": ["OR047"]},
                 geometry=[county], crs=crs).to_file("data/mc_boundary.shp")
river = wiggly_line((cx - 32_000, cy - 6_000), (cx + 32_000, cy + 9_000), r, 16, 0.06)
shape = (540, 540)
transform = from_origin(cx - 27_000, cy + 27_000, 100, 100)
xs = transform.c + 50 + 100 * np.arange(shape[1]); ys = transform.f - 50 - 100 * np.arange(shape[0])
gx, gy = np.meshgrid(xs, ys)
dist = shapely.distance(river, shapely.points(gx, gy))
hills = smooth_field(shape, rng(1), 25)
wet = np.exp(-dist / 5000.0)
lc = np.select([dist < 250, wet > 0.75, hills > 0.7, hills > 0.55, hills > 0.45, wet > 0.4, hills > 0.3],
               [11, 90, 42, 43, 41, 82, 81], 71).astype("uint8")
lc[(lc == 82) & (smooth_field(shape, rng(8), 10) > 0.5)] = 81
lc[(smooth_field(shape, rng(2), 6) > 0.8) & (hills < 0.5)] = 52
lc[(wet > 0.85) & (smooth_field(shape, rng(3), 4) > 0.75)] = 95
town = np.hypot(gx - (cx + 6_000), gy - (cy + 2_000))
lc[town < 4_000] = 22; lc[town < 2_500] = 23; lc[town < 1_200] = 24; lc[(town > 4_000) & (town < 5_000)] = 21
lc[smooth_field(shape, rng(4), 3) > 0.92] = 31
write_raster("data/land_cover.tif", lc, transform, crs, nodata=0)
cells = voronoi_cells(county.buffer(3_000), 420, rng(5))
cent = np.array([[c.centroid.x, c.centroid.y] for c in cells])
d = shapely.distance(river, shapely.points(cent))
noise = rng(6).normal(0, 8, len(cells))
depth = np.clip(5 + 85 * (1 - np.exp(-d / 6000.0)) + noise, 0, 92).round(0)
classes = ["Excessively drained", "Moderately well drained", "Poorly drained", "Somewhat poorly drained", "Well drained"]
cls = np.select([depth < 15, depth < 35, depth < 60, depth < 85], [2, 3, 1, 4], 0)
drain = [classes[k] for k in cls]
hyd = np.select([depth < 15, depth < 35, depth < 60], ["D", "C/D", "C"], "B")
depth_col = pd.array(depth, dtype="Float64"); depth_col[rng(7).choice(len(cells), 12, replace=False)] = pd.NA
soils = gpd.GeoDataFrame({
    "AREASYMBOL": "OR643", "SPATIALVER": 7, "MUSYM": [f"{10 + k % 80}{'ABCDE'[k % 5]}" for k in range(len(cells))],
    "MUKEY": [str(2_400_000 + 37 * k) for k in range(len(cells))], "drclassdcd": drain, "hydgrpdcd": hyd,
    "wdepannmin": depth_col}, geometry=cells, crs=crs).to_crs(4269)
soils.to_file("data/mc_soils.shp")
