# A Gulf of Mexico / Caribbean-like region (WGS 84): land, 0.5°-wide shallow
# waters (global and the US part), ocean measurements of temperature and
# salinity, and seagrass beds on the US coast where water is warm and salty.
r = rng()
region = shapely.box(-100, 8, -60, 42)
north = Polygon([(-100, 42), (-100, 26), (-97.5, 26), (-97, 28), (-94, 29.6), (-90, 29.2), (-89.3, 29.9), (-85, 29.8),
                 (-82.8, 28.5), (-81.8, 26.5), (-80.4, 25.2), (-80.1, 27), (-81.3, 30.5), (-78, 33.8), (-75.5, 35.3),
                 (-76, 38), (-74, 40.5), (-70, 41.7), (-70, 42)])
south = Polygon([(-100, 8), (-100, 21), (-97.5, 21.5), (-96.5, 19.2), (-94.5, 18.2), (-91, 18.7), (-90.5, 21.2), (-87, 21.4),
                 (-87.5, 18.5), (-88.3, 15.9), (-84, 15.8), (-83.4, 11), (-81.5, 9), (-77, 8.7), (-76, 9.5), (-72, 11.8),
                 (-69, 11.5), (-64, 10.5), (-61, 10.7), (-60, 8)])
islands = [organic_polygon(x, y, s, rng(k + 1), 0.3) for k, (x, y, s) in enumerate(
    [(-79, 21.8, 1.4), (-72.5, 19, 1.0), (-66.5, 18.2, 0.5), (-77.3, 18.1, 0.5), (-77.8, 24.5, 0.6), (-61.5, 15, 0.3)])]
land = shapely.union_all([north, south] + islands).intersection(region)
shallow = land.buffer(0.5).difference(land).intersection(region)
polys = lambda g: [q for q in shapely.get_parts(g) if q.geom_type == "Polygon" and q.area > 0]
parts = polys(shallow)
gpd.GeoDataFrame({"Id": np.arange(1, len(parts) + 1)}, geometry=parts, crs=4326).to_file("data/Global_shallow_waters.shp")
usa_box = shapely.box(-100, 24.6, -65, 42)
usa = shapely.MultiPolygon(polys(shallow.intersection(north.buffer(0.6)).intersection(usa_box)))
gpd.GeoDataFrame({"Id": [1], "Region": ["Continental United States"]}, geometry=[usa], crs=4326).to_file("data/USA_shallow_waters.shp")
ocean = region.difference(land)
pts = points_in(ocean, 600, r)
lon = np.array([p.x for p in pts]); lat = np.array([p.y for p in pts])
wiggle = lambda x, y, k: np.sin(x / 3.1 + k) * np.cos(y / 2.7 - k)
temp = np.round(31.5 - 0.36 * (lat - 8) + 0.8 * wiggle(lon, lat, 0) + r.normal(0, 0.3, len(pts)), 2)
river = np.exp(-np.hypot(lon + 89.4, lat - 29.0) / 1.8)
salinity = np.round(36.2 - 9 * river - 1.5 * np.exp(-np.hypot(lon + 62, lat - 9.5) / 2.5) + 0.4 * wiggle(lon, lat, 1) + r.normal(0, 0.15, len(pts)), 2)
gpd.GeoDataFrame({"Name": [f"EMU_{k:05d}" for k in range(len(pts))], "UnitTop": 0, "UnitBottom": 90,
                  "temp": temp, "salinity": salinity, "dissO2": np.round(6.5 - 0.06 * temp + r.normal(0, 0.2, len(pts)), 2)},
                 geometry=pts, crs=4326).to_file("data/Global_ocean_measurements.shp")
beds = []
cand = points_in(usa, 2000, rng(7))
for p in cand:
    t = 31.5 - 0.36 * (p.y - 8) + 0.8 * wiggle(p.x, p.y, 0)
    s = 36.2 - 9 * np.exp(-np.hypot(p.x + 89.4, p.y - 29.0) / 1.8)
    if t > 24 and s > 33 and r.uniform() < 0.5:
        bed = organic_polygon(p.x, p.y, r.uniform(0.05, 0.15), rng(len(beds) + 20), 0.4, n=16).intersection(usa)
        if bed.area > 0:
            beds.append(bed)
    if len(beds) == 45:
        break
gpd.GeoDataFrame({"SG_ID": np.arange(1, len(beds) + 1), "Source": "NOAA"}, geometry=beds, crs=4326).to_file("data/USA_seagrass.shp")
