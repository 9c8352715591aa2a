county, lc, soils = mc_layers()
write_mc_boundary(county)
write_raster("data/land_cover.tif", lc, MC_TRANSFORM, MC_CRS, nodata=0)
soils.to_crs(4269).to_file("data/mc_soils.shp")
