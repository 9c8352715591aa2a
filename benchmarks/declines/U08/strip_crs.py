# Puts the Etobicoke layers written by T08's generator on an unlabelled
# local grid: UTM 17N shifted to an arbitrary origin and expressed in feet,
# stored as shapefiles without a .prj (no CRS). The Shape_* columns, which
# would give the unit away, are dropped. Deterministic.
import os
import warnings
warnings.filterwarnings("ignore", message="'crs' was not provided")
for name in ("etobicoke", "fire_stations"):
    g = gpd.read_file(f"data/{name}.geojson").to_crs(32617)
    local = g.geometry.translate(-600_000.0, -4_825_000.0).scale(1 / 0.3048, 1 / 0.3048, origin=(0, 0))
    attrs = g.drop(columns=[c for c in ("geometry", "Shape_Length", "Shape_Area") if c in g.columns])
    gpd.GeoDataFrame(attrs, geometry=list(local), crs=None).to_file(f"data/{name}.shp")
    os.remove(f"data/{name}.geojson")
