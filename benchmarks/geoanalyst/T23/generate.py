# A coastal piece of Georgetown County, SC (UTM 17N, 30 m): PAD-US protected
# areas eligible for the CRS open-space credit, their attribute table, and
# property parcels (small in town, large in the rural west).
r = rng()
shape = (500, 500)
transform = from_origin(640_000, 3_715_000, 30, 30)
area = shapely.box(640_000, 3_700_000, 655_000, 3_715_000)
town = Point(650_500, 3_704_000)
seeds = points_in(area, 3000, r)
xy = np.array([[p.x, p.y] for p in seeds])
w = 0.15 + np.exp(-np.hypot(xy[:, 0] - town.x, xy[:, 1] - town.y) / 2500.0)
pick = r.choice(len(seeds), 700, replace=False, p=w / w.sum())
cells = shapely.voronoi_polygons(shapely.MultiPoint([seeds[i] for i in pick]), extend_to=area.buffer(5000))
parcels = [c.intersection(area) for c in cells.geoms]
parcels = [p for p in parcels if p.area > 0]
n = len(parcels)
gpd.GeoDataFrame({
    "PARCEL_ID": [f"{(i * 7919) % 99991:05d}-{i % 97:02d}-{i:04d}" for i in range(n)], "STATE_CODE": "45043",
    "OWNER_TYPE": r.choice(["Private", "Public", "Trust"], n, p=[0.85, 0.1, 0.05]),
    "DEED_ACRES": [round(p.area * 0.000247105 * r.uniform(0.95, 1.05), 2) for p in parcels],
}, geometry=parcels, crs=32617).to_file("data/GeorgetownCo_Parcels.shp")
kinds = [("Fee", "FED", "Waccamaw National Wildlife Refuge"), ("Fee", "STAT", "Hobcaw Barony"), ("Easement", "NGO", "Black River Conservation Easement"),
         ("Fee", "LOC", "Georgetown County Park"), ("Easement", "PVT", "Winyah Bay Focus Area Easement"), ("Fee", "STAT", "Samworth WMA")]
rows_, cols_ = np.indices(shape)
padus = np.zeros(shape, dtype="uint16")
attrib = []
for k in range(30):
    cat, own, name = kinds[k % len(kinds)]
    c0 = (r.integers(20, 480), r.integers(20, 480)); rad = r.uniform(5, 20) * (1.5 if own in ("FED", "STAT") else 1.0)
    poly = organic_polygon(c0[1], c0[0], rad, rng(k + 1), irregularity=0.35)
    inside = shapely.contains_xy(poly, cols_ + 0.5, rows_ + 0.5)
    padus[inside & (padus == 0)] = k + 1
    attrib.append({"OBJECTID": k + 1, "Category": cat, "Own_Type": own, "Own_Name": {"FED": "USFWS", "STAT": "SCDNR", "LOC": "Georgetown County", "NGO": "The Nature Conservancy", "PVT": "Private"}[own],
                   "Unit_Nm": f"{name} {k // len(kinds) + 1}", "GAP_Sts": int(r.integers(1, 4)), "GIS_Acres": round(float(inside.sum()) * 900 * 0.000247105, 1)})
write_raster("data/PADUS_CRS_final.tif", padus, transform, "EPSG:32617", nodata=None)
pd.DataFrame(attrib).to_csv("data/PADUS_CRS_attrib.csv", index=False)
