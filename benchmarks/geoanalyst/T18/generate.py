# San Francisco-like outline (one polygon, WGS 84) and a street-tree sample:
# trees are dense in the north-east and the species is missing far more often
# in a few neighbourhoods whose records came from older surveys.
r = rng()
centre = (-122.445, 37.760)
outline = organic_polygon(0.0, 0.0, 5500.0, r, irregularity=0.12)
to_ll = lambda g: shapely.affinity.translate(shapely.affinity.scale(g, 1 / 88000.0, 1 / 111000.0, origin=(0, 0)), *centre)
gpd.GeoDataFrame(geometry=[to_ll(outline)], crs=4326).to_file("data/sfo_boroughs.geojson", driver="GeoJSON")
n = 4000
cand = points_in(outline, n * 3, r)
xy = np.array([[p.x, p.y] for p in cand])
dense = np.exp(-np.hypot(xy[:, 0] - 2500, xy[:, 1] - 2500) / 2500.0)
pick = r.choice(len(cand), n, replace=False, p=dense / dense.sum())
xy = xy[pick]
old_survey = 0.05 + 0.7 * np.exp(-np.hypot(xy[:, 0] + 2500, xy[:, 1] + 1000) / 1500.0) + 0.5 * np.exp(-np.hypot(xy[:, 0] - 1500, xy[:, 1] + 3000) / 1200.0)
missing = r.uniform(size=n) < np.clip(old_survey, 0, 0.9)
species = np.array(["Platanus x hispanica :: Sycamore: London Plane", "Tristaniopsis laurina :: Swamp Myrtle",
                    "Lophostemon confertus :: Brisbane Box", "Metrosideros excelsa :: New Zealand Xmas Tree",
                    "Arbutus 'Marina' :: Hybrid Strawberry Tree", "Pittosporum undulatum :: Victorian Box",
                    "Prunus cerasifera :: Cherry Plum", "Ginkgo biloba :: Maidenhair Tree"])
sp = species[r.integers(0, len(species), n)].astype(object)
sp[missing] = None
pts = [to_ll(Point(x, y)) for x, y in xy]
trees = gpd.GeoDataFrame({
    "LegalStatus": r.choice(["DPW Maintained", "Permitted Site", "Undocumented", "Significant Tree"], n, p=[0.55, 0.3, 0.13, 0.02]),
    "Species": sp, "Address": [f"{100 + 7 * i % 3900} {['Mission', 'Valencia', 'Geary', 'Irving', 'Taraval', 'Fulton'][i % 6]} St" for i in range(n)],
    "SiteOrder": r.integers(1, 12, n), "SiteInfo": r.choice(["Sidewalk: Curb side : Cutout", "Sidewalk: Property side : Yard", "Median : Cutout"], n),
    "PlantType": "Tree", "Caretaker": r.choice(["Private", "DPW", "Port", "Rec/Park"], n, p=[0.7, 0.22, 0.03, 0.05]),
    "CareAssistant": None, "PlantDate": [None if m else f"{1990 + i % 30}-0{1 + i % 9}-01" for i, m in enumerate(missing)],
    "DBH": np.round(r.gamma(2.0, 5.0, n), 0), "PlotSize": r.choice(["Width 3ft", "3x3", "4x4", None], n), "PermitNotes": None,
}, geometry=pts, crs=4326)
trees.to_file("data/street_trees_sample.geojson", driver="GeoJSON")
