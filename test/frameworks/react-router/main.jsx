import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { BrowserRouter, Link, Route, Routes, useParams } from 'react-router'
import { tracker } from './tracker.js'

function Product() {
  const { id } = useParams()
  return (
    <>
      <h1>Product {id}</h1>
      <button onClick={() => tracker.clickItem({ item_id: String(id), variant_item_id: id + '-1' })}>track a click</button>
    </>
  )
}

// StrictMode runs components twice in development: a tracker made in one would track twice.
createRoot(document.getElementById('root')).render(
  <StrictMode>
    <BrowserRouter>
      <nav>
        <Link to="/">Home</Link> <Link to="/products/shoe">Shoe</Link> <Link to="/products/cap">Cap</Link>
      </nav>
      <Routes>
        <Route path="/" element={<h1>Home</h1>} />
        <Route path="/products/:id" element={<Product />} />
      </Routes>
    </BrowserRouter>
  </StrictMode>
)
