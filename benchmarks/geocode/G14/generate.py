# Rivers with a stream order, roads, and land parcels in a 6 x 6 km area
# (EPSG:32618).
r = rng()
x0, y0 = 580000.0, 4500000.0
rivers = []
main = wiggly_line((x0, y0 + 3000), (x0 + 6000, y0 + 2600), r, n=20, wiggle=0.04)
rivers.append((1, 3, main))
for k, (sx, sy) in enumerate([(1200, 5800), (3000, 200), (4700, 5600)]):
    end = main.interpolate(main.project(Point(x0 + sx, y0 + 3000)))
    rivers.append((k + 2, 2 if k != 1 else 1, wiggly_line((x0 + sx, y0 + sy), (end.x, end.y), r, n=10, wiggle=0.05)))
gpd.GeoDataFrame({"river_id": [a for a, _, _ in rivers], "order": [b for _, b, _ in rivers]}, geometry=[g for _, _, g in rivers], crs=32618).to_file("data/rivers.geojson", driver="GeoJSON")
roads = [LineString([(x0, y0 + y), (x0 + 6000, y0 + y + 150)]) for y in (800, 4200)] + [LineString([(x0 + x, y0), (x0 + x - 200, y0 + 6000)]) for x in (2000, 5200)]
gpd.GeoDataFrame({"road": ["R1", "R2", "R3", "R4"]}, geometry=roads, crs=32618).to_file("data/roads.geojson", driver="GeoJSON")
parcels = grid_cells(x0, y0, x0 + 6000, y0 + 6000, 12, 12)
gpd.GeoDataFrame({"parcel_id": np.arange(1, len(parcels) + 1), "owner": r.choice(["private", "state", "county"], len(parcels), p=[0.8, 0.15, 0.05])}, geometry=parcels, crs=32618).to_file("data/parcels.geojson", driver="GeoJSON")
